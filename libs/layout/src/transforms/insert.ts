import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { checkLength, formatSymInt, TransformBase, unknownVectors, type TransformStep, type VectorLengthsStrides } from './transform.ts';

const noop = (): void => {};

/** `insert(L)`: 0 → 1, a new upper dim of length L that maps to nothing (a dangling dim). */
export class Insert extends TransformBase {
  readonly kind = 'insert';
  readonly lowerArity = 0;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[] = [];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly length: SymInt;

  constructor(length: SymInt) {
    super([length]);
    this.length = length;
    checkLength(length, 'insert length');
    this.upperLengths = [length];
  }

  compile(_bindings: Bindings, _up: readonly number[], _low: readonly number[]): TransformStep {
    return { lower: noop, update: noop, valid: () => true };
  }

  lowerSymbolic(_up: readonly SymInt[]): SymInt[] {
    return [];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return unknownVectors(1);
  }

  toString(): string {
    return `insert(${formatSymInt(this.length)})`;
  }
}

/** Adds an upper dim of length L that does not affect the lower index. */
export function insert(length: SymInt): Insert {
  return new Insert(length);
}
