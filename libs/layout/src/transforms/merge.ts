import { floorDivInt } from '../integerMath.ts';
import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { product } from '../symbolic/poly.ts';
import { floorDiv, mod } from '../symbolic/simplify.ts';
import { checkLength, formatList, TransformBase, vectorGcd, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `merge(lowLengths[n])`: n → 1, upper length Π lowLengths. Mixed-radix split, first digit most
 * significant (row-major, last fastest): low[n−1] = up mod L[n−1], …, low[0] = ⌊up / Π_{i≥1} L[i]⌋
 * (no final mod, as CK). Always valid by promise. Not linear: moves recompute every digit from the
 * new upper index (CK's `merge_v2_magic_division`).
 *
 * Vector rule: (gcd(V_last, L_last), S_last): an aligned run never carries into the next digit.
 */
export class Merge extends TransformBase {
  readonly kind = 'merge';
  readonly lowerArity: number;
  readonly upperArity = 1;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = false;

  readonly lengths: readonly SymInt[];

  constructor(lengths: readonly SymInt[]) {
    super(lengths);
    this.lengths = lengths;
    lengths.forEach((l, i) => checkLength(l, `merge lengths[${i}]`));
    if (lengths.length === 0) checkLength(0, 'merge lengths (at least one)');
    this.lowerArity = lengths.length;
    this.lowerLengths = [...lengths];
    this.upperLengths = [product(lengths)];
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const L = this.values(this.lengths, bindings);
    const n = L.length;
    const u = up[0]!;
    const split = (h: number[], dh: number[] | undefined): void => {
      let rest = h[u]!;
      for (let i = n - 1; i > 0; i--) {
        const q = floorDivInt(rest, L[i]!);
        const digit = rest - q * L[i]!;
        const li = low[i]!;
        if (dh !== undefined) dh[li] = digit - h[li]!;
        h[li] = digit;
        rest = q;
      }
      const l0 = low[0]!;
      if (dh !== undefined) dh[l0] = rest - h[l0]!;
      h[l0] = rest;
    };
    return {
      lower: (h) => split(h, undefined),
      update: (h, dh) => split(h, dh),
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    const out: SymInt[] = new Array<SymInt>(this.lowerArity);
    let rest = up[0]!;
    for (let i = this.lowerArity - 1; i > 0; i--) {
      out[i] = mod(rest, this.lengths[i]!);
      rest = floorDiv(rest, this.lengths[i]!);
    }
    out[0] = rest;
    return out;
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    const last = this.lowerArity - 1;
    return { lengths: [vectorGcd(lower.lengths[last]!, this.lengths[last]!)], strides: [lower.strides[last]!] };
  }

  toString(): string {
    return `merge(${formatList(this.lengths)})`;
  }
}

/** Merges lower dims of `lengths` into one upper dim, row-major (last lower dim fastest). */
export function merge(lengths: readonly SymInt[]): Merge {
  return new Merge(lengths);
}
