import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, sub } from '../symbolic/poly.ts';
import { checkLength, checkNonNegative, formatSymInt, TransformBase, vectorGcd, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `pad(L, left, right)`: 1 → 1, upper length L + left + right, low = up − left. Valid iff
 * left ≤ up < left + L, i.e. iff the lower index lies in [0, L); `skipValidityCheck` turns the
 * check off (always-valid, CK's `SkipIsValidCheck`). Linear.
 *
 * Vector rule: gcd(V, left, L) with the lower stride, so that an aligned vector is either wholly
 * valid or wholly padding (CK returns "unknown" here; this is its safe refinement).
 */
export class Pad extends TransformBase {
  readonly kind = 'pad';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid: boolean;
  readonly isLinear = true;

  readonly length: SymInt;
  readonly left: SymInt;
  readonly right: SymInt;
  readonly skipValidityCheck: boolean;

  constructor(length: SymInt, left: SymInt, right: SymInt, skipValidityCheck = false) {
    super([length, left, right]);
    this.length = length;
    this.left = left;
    this.right = right;
    this.skipValidityCheck = skipValidityCheck;
    checkLength(length, 'pad length');
    checkNonNegative(left, 'pad left');
    checkNonNegative(right, 'pad right');
    this.upperLengths = [add(length, left, right)];
    this.lowerLengths = [length];
    this.isAlwaysValid = skipValidityCheck;
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [len, lp] = this.values([this.length, this.left], bindings) as [number, number];
    const u = up[0]!;
    const l = low[0]!;
    const check = !this.skipValidityCheck;
    return {
      lower: (h) => {
        h[l] = h[u]! - lp;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]! - lp;
      },
      valid: (h) => !check || (h[u]! >= lp && h[u]! < lp + len),
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [sub(up[0]!, this.left)];
  }

  override validitySymbolic(up: readonly SymInt[]): SymInt[] {
    if (this.skipValidityCheck) return [];
    return [sub(up[0]!, this.left), sub(add(this.left, this.length, -1), up[0]!)];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [vectorGcd(vectorGcd(lower.lengths[0]!, this.left), this.length)], strides: [lower.strides[0]!] };
  }

  toString(): string {
    const skip = this.skipValidityCheck ? ', unchecked' : '';
    return `pad(${formatSymInt(this.length)}, left ${formatSymInt(this.left)}, right ${formatSymInt(this.right)}${skip})`;
  }
}

/** Pads a dim of length L by `left` before and `right` after (padding indices are invalid). */
export function pad(length: SymInt, left: SymInt, right: SymInt, skipValidityCheck = false): Pad {
  return new Pad(length, left, right, skipValidityCheck);
}
