import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, sub } from '../symbolic/poly.ts';
import { checkLength, checkNonNegative, formatSymInt, TransformBase, vectorGcd, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `rightPad(L, right)`: 1 → 1, upper length L + right, low = up, valid iff up < L (unless
 * `skipValidityCheck`). Linear. Vector rule: gcd(V, L), lower stride (CK copies V and leaves the
 * multiple-of-V condition to the caller; the gcd makes it hold).
 */
export class RightPad extends TransformBase {
  readonly kind = 'rightPad';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid: boolean;
  readonly isLinear = true;

  readonly length: SymInt;
  readonly right: SymInt;
  readonly skipValidityCheck: boolean;

  constructor(length: SymInt, right: SymInt, skipValidityCheck = false) {
    super([length, right]);
    this.length = length;
    this.right = right;
    this.skipValidityCheck = skipValidityCheck;
    checkLength(length, 'rightPad length');
    checkNonNegative(right, 'rightPad right');
    this.upperLengths = [add(length, right)];
    this.lowerLengths = [length];
    this.isAlwaysValid = skipValidityCheck;
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [len] = this.values([this.length], bindings) as [number];
    const u = up[0]!;
    const l = low[0]!;
    const check = !this.skipValidityCheck;
    return {
      lower: (h) => {
        h[l] = h[u]!;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]!;
      },
      valid: (h) => !check || h[u]! < len,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [up[0]!];
  }

  override validitySymbolic(up: readonly SymInt[]): SymInt[] {
    return this.skipValidityCheck ? [] : [sub(sub(this.length, 1), up[0]!)];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [vectorGcd(lower.lengths[0]!, this.length)], strides: [lower.strides[0]!] };
  }

  toString(): string {
    return `rightPad(${formatSymInt(this.length)}, right ${formatSymInt(this.right)}${this.skipValidityCheck ? ', unchecked' : ''})`;
  }
}

/** Pads a dim of length L by `right` invalid indices after it. */
export function rightPad(length: SymInt, right: SymInt, skipValidityCheck = false): RightPad {
  return new RightPad(length, right, skipValidityCheck);
}
