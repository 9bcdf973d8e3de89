import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, sub } from '../symbolic/poly.ts';
import {
  checkLength,
  checkNonNegative,
  formatSymInt,
  TransformBase,
  vectorGcd,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';

/** Which ends of a padded dim are checked: an end is checked where there is padding to reject. */
interface PaddedEnds {
  readonly left: boolean;
  readonly right: boolean;
}

/**
 * The shared shape of `pad`, `leftPad` and `rightPad`: 1 → 1, upper length L + left + right,
 * low = up − left, linear. Each checked end adds one validity condition (up ≥ left; up < left + L)
 * and one factor to the vector rule (gcd with left; gcd with L), so that an aligned vector is
 * either wholly valid or wholly padding. `skipValidityCheck` drops the conditions (CK's
 * `SkipIsValidCheck`).
 */
export abstract class PaddingTransform extends TransformBase {
  abstract override readonly kind: 'pad' | 'leftPad' | 'rightPad';
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
  readonly #ends: PaddedEnds;

  protected constructor(name: string, length: SymInt, left: SymInt, right: SymInt, ends: PaddedEnds, skipValidityCheck: boolean) {
    super([length, left, right]);
    this.length = length;
    this.left = left;
    this.right = right;
    this.skipValidityCheck = skipValidityCheck;
    this.#ends = ends;
    checkLength(length, `${name} length`);
    if (ends.left) checkNonNegative(left, `${name} left`);
    if (ends.right) checkNonNegative(right, `${name} right`);
    this.upperLengths = [add(length, left, right)];
    this.lowerLengths = [length];
    this.isAlwaysValid = skipValidityCheck;
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const [len, lp] = this.values([this.length, this.left], bindings) as [number, number];
    const u = up[0]!;
    const l = low[0]!;
    const checkLeft = !this.skipValidityCheck && this.#ends.left;
    const checkRight = !this.skipValidityCheck && this.#ends.right;
    return {
      lower: (h) => {
        h[l] = h[u]! - lp;
      },
      update: (h, dh) => {
        dh[l] = dh[u]!;
        h[l] = h[u]! - lp;
      },
      valid: (h) => (!checkLeft || h[u]! >= lp) && (!checkRight || h[u]! < lp + len),
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [sub(up[0]!, this.left)];
  }

  override validitySymbolic(up: readonly SymInt[]): SymInt[] {
    if (this.skipValidityCheck) return [];
    return [
      ...(this.#ends.left ? [sub(up[0]!, this.left)] : []),
      ...(this.#ends.right ? [sub(add(this.left, this.length, -1), up[0]!)] : []),
    ];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    let length = lower.lengths[0]!;
    if (this.#ends.left) length = vectorGcd(length, this.left);
    if (this.#ends.right) length = vectorGcd(length, this.length);
    return { lengths: [length], strides: [lower.strides[0]!] };
  }

  protected formatArguments(...parts: string[]): string {
    return `${this.kind}(${[formatSymInt(this.length), ...parts].join(', ')}${this.skipValidityCheck ? ', unchecked' : ''})`;
  }
}

/**
 * `pad(L, left, right)`: valid iff left ≤ up < left + L, i.e. iff the lower index lies in [0, L).
 * Vector rule: gcd(V, left, L) with the lower stride (CK returns "unknown" here; this is its safe
 * refinement).
 */
export class Pad extends PaddingTransform {
  readonly kind = 'pad';

  constructor(length: SymInt, left: SymInt, right: SymInt, skipValidityCheck = false) {
    super('pad', length, left, right, { left: true, right: true }, skipValidityCheck);
  }

  toString(): string {
    return this.formatArguments(`left ${formatSymInt(this.left)}`, `right ${formatSymInt(this.right)}`);
  }
}

/** Pads a dim of length L by `left` before and `right` after (padding indices are invalid). */
export function pad(length: SymInt, left: SymInt, right: SymInt, skipValidityCheck = false): Pad {
  return new Pad(length, left, right, skipValidityCheck);
}
