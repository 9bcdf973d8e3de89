import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, sub } from '../symbolic/poly.ts';
import { checkLength, checkNonNegative, formatSymInt, TransformBase, vectorGcd, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `leftPad(L, left)`: 1 → 1, upper length L + left, low = up − left, valid iff up ≥ left (unless
 * `skipValidityCheck`). Linear. Vector rule: gcd(V, left), lower stride.
 */
export class LeftPad extends TransformBase {
  readonly kind = 'leftPad';
  readonly lowerArity = 1;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid: boolean;
  readonly isLinear = true;

  readonly length: SymInt;
  readonly left: SymInt;
  readonly skipValidityCheck: boolean;

  constructor(length: SymInt, left: SymInt, skipValidityCheck = false) {
    super([length, left]);
    this.length = length;
    this.left = left;
    this.skipValidityCheck = skipValidityCheck;
    checkLength(length, 'leftPad length');
    checkNonNegative(left, 'leftPad left');
    this.upperLengths = [add(length, left)];
    this.lowerLengths = [length];
    this.isAlwaysValid = skipValidityCheck;
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [lp] = this.values([this.left], bindings) as [number];
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
      valid: (h) => !check || h[u]! >= lp,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [sub(up[0]!, this.left)];
  }

  override validitySymbolic(up: readonly SymInt[]): SymInt[] {
    return this.skipValidityCheck ? [] : [sub(up[0]!, this.left)];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    return { lengths: [vectorGcd(lower.lengths[0]!, this.left)], strides: [lower.strides[0]!] };
  }

  toString(): string {
    return `leftPad(${formatSymInt(this.length)}, left ${formatSymInt(this.left)}${this.skipValidityCheck ? ', unchecked' : ''})`;
  }
}

/** Pads a dim of length L by `left` invalid indices before it. */
export function leftPad(length: SymInt, left: SymInt, skipValidityCheck = false): LeftPad {
  return new LeftPad(length, left, skipValidityCheck);
}
