import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { checkLength, formatList, TransformBase, unknownVectors, type TransformStep, type VectorLengthsStrides } from './transform.ts';

const noop = (): void => {};

/** `replicate(lengths[n])`: 0 → n, upper dims that are ignored (a broadcast: every value maps to the same lower index). */
export class Replicate extends TransformBase {
  readonly kind = 'replicate';
  readonly lowerArity = 0;
  readonly upperArity: number;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[] = [];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly lengths: readonly SymInt[];

  constructor(lengths: readonly SymInt[]) {
    super(lengths);
    this.lengths = lengths;
    lengths.forEach((l, i) => checkLength(l, `replicate lengths[${i}]`));
    this.upperArity = lengths.length;
    this.upperLengths = [...lengths];
  }

  compile(_bindings: Bindings, _up: readonly number[], _low: readonly number[]): TransformStep {
    return { lower: noop, update: noop, valid: () => true };
  }

  lowerSymbolic(_up: readonly SymInt[]): SymInt[] {
    return [];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return unknownVectors(this.upperArity);
  }

  toString(): string {
    return `replicate(${formatList(this.lengths)})`;
  }
}

/** Upper dims of `lengths` that are broadcast (ignored by the lower index). */
export function replicate(lengths: readonly SymInt[]): Replicate {
  return new Replicate(lengths);
}
