import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { checkNonNegative, formatSymInt, TransformBase, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/** `freeze(index)`: 1 → 0, the lower dim is pinned at `index` (consumes a dim without an upper one). */
export class Freeze extends TransformBase {
  readonly kind = 'freeze';
  readonly lowerArity = 1;
  readonly upperArity = 0;
  readonly upperLengths: readonly SymInt[] = [];
  readonly lowerLengths: readonly (SymInt | undefined)[] = [undefined];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly index: SymInt;

  constructor(index: SymInt) {
    super([index]);
    this.index = index;
    checkNonNegative(index, 'freeze index');
  }

  compile(bindings: Bindings, _up: readonly number[], low: readonly number[]): TransformStep {
    const [v] = this.values([this.index], bindings) as [number];
    const l = low[0]!;
    return {
      lower: (h) => {
        h[l] = v;
      },
      update: (h, dh) => {
        dh[l] = 0;
        h[l] = v;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(_up: readonly SymInt[]): SymInt[] {
    return [this.index];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [], strides: [] };
  }

  toString(): string {
    return `freeze(${formatSymInt(this.index)})`;
  }
}

/** Pins a dim at `index`, removing it from the upper index. */
export function freeze(index: SymInt): Freeze {
  return new Freeze(index);
}
