import { XorLengthError } from '../errors.ts';
import { isPowerOfTwo, modInt } from '../integerMath.ts';
import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { mod, xor as symXor } from '../symbolic/simplify.ts';
import {
  checkArity,
  checkLength,
  formatList,
  formatSymInt,
  TransformBase,
  unknownVectors,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';

/**
 * `xor([len0, len1])`: 2 → 2 swizzle, low0 = up0, low1 = up1 XOR (up0 mod len1). A bijection of
 * [0, len0) × [0, len1) and an involution, which needs len1 to be a static power of two (others are
 * rejected). Always valid. Not linear: moves recompute both. Vector rule: unknown for both dims (CK
 * copies the lower facts, which is unsafe: the xor permutes the low bits of an aligned run).
 */
export class Xor extends TransformBase {
  readonly kind = 'xor';
  readonly lowerArity = 2;
  readonly upperArity = 2;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = false;

  readonly lengths: readonly SymInt[];

  constructor(lengths: readonly SymInt[]) {
    super(lengths);
    this.lengths = lengths;
    checkArity('xor lengths', 2, lengths.length);
    checkLength(lengths[0]!, 'xor lengths[0]');
    const len1 = lengths[1]!;
    if (typeof len1 !== 'number' || !isPowerOfTwo(len1)) throw new XorLengthError(formatSymInt(len1));
    this.upperLengths = [...lengths];
    this.lowerLengths = [...lengths];
  }

  compile(_bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const len1 = this.lengths[1] as number;
    const small = len1 <= 2 ** 30;
    const [u0, u1] = up as [number, number];
    const [l0, l1] = low as [number, number];
    // up1 XOR k with k ∈ [0, len1) only flips bits below len1: exact for any safe integer up1.
    const x = (a: number, k: number): number => {
      if (small && (a | 0) === a) return a ^ k;
      const r = modInt(a, len1);
      return a - r + (r ^ k);
    };
    return {
      lower: (h) => {
        const a = h[u0]!;
        h[l0] = a;
        h[l1] = x(h[u1]!, modInt(a, len1));
      },
      update: (h, dh) => {
        const a = h[u0]!;
        const b = x(h[u1]!, modInt(a, len1));
        dh[l0] = a - h[l0]!;
        dh[l1] = b - h[l1]!;
        h[l0] = a;
        h[l1] = b;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [up[0]!, symXor(up[1]!, mod(up[0]!, this.lengths[1]!))];
  }

  upperVectorLengthsStrides(_lower: VectorLengthsStrides): VectorLengthsStrides {
    return unknownVectors(2);
  }

  toString(): string {
    return `xor(${formatList(this.lengths)})`;
  }
}

/** The xor swizzle over dims of lengths [len0, len1]; len1 must be a static power of two. */
export function xor(lengths: readonly SymInt[]): Xor {
  return new Xor(lengths);
}
