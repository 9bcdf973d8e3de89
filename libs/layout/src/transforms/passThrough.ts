import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { checkLength, formatSymInt, TransformBase, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/** `passThrough(L)`: 1 → 1, low = up, upper length L. Linear, always valid; vector facts are copied. */
export class PassThrough extends TransformBase {
  readonly kind = 'passThrough';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly length: SymInt;

  constructor(length: SymInt) {
    super([length]);
    this.length = length;
    checkLength(length, 'passThrough length');
    this.upperLengths = [length];
    this.lowerLengths = [length];
  }

  compile(_bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const u = up[0]!;
    const l = low[0]!;
    return {
      lower: (h) => {
        h[l] = h[u]!;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]!;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [up[0]!];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return lower;
  }

  toString(): string {
    return `passThrough(${formatSymInt(this.length)})`;
  }
}

/** The identity on one dim of length L. */
export function passThrough(length: SymInt): PassThrough {
  return new PassThrough(length);
}
