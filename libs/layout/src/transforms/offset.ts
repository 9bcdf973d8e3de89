import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add } from '../symbolic/poly.ts';
import {
  checkInteger,
  checkLength,
  formatSymInt,
  TransformBase,
  vectorGcd,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';

/** `offset(L, off)`: 1 → 1, upper length L, low = up + off. Linear, always valid. Vector rule: gcd(V, off). */
export class Offset extends TransformBase {
  readonly kind = 'offset';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly (SymInt | undefined)[] = [undefined];
  readonly isAlwaysValid = true;
  readonly isLinear = true;

  readonly length: SymInt;
  readonly offset: SymInt;

  constructor(length: SymInt, offset: SymInt) {
    super([length, offset]);
    this.length = length;
    this.offset = offset;
    checkLength(length, 'offset length');
    checkInteger(offset, 'offset offset');
    this.upperLengths = [length];
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [o] = this.values([this.offset], bindings) as [number];
    const u = up[0]!;
    const l = low[0]!;
    return {
      lower: (h) => {
        h[l] = h[u]! + o;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]! + o;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [add(up[0]!, this.offset)];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [vectorGcd(lower.lengths[0]!, this.offset)], strides: [lower.strides[0]!] };
  }

  toString(): string {
    return `offset(${formatSymInt(this.length)}, +${formatSymInt(this.offset)})`;
  }
}

/** Shifts a dim of length L by `off`: low = up + off. */
export function offset(length: SymInt, off: SymInt): Offset {
  return new Offset(length, off);
}
