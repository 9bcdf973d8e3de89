import type { Bindings } from '../symbolic/evaluate.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { add, mul, product } from '../symbolic/poly.ts';
import { checkLength, formatList, TransformBase, vectorGcd, type TransformStep, type VectorLengthsStrides } from './transform.ts';

/**
 * `unmerge(upLengths[n])`: 1 → n, low = Σ up_i·S_i with row-major strides S (S_{n−1} = 1,
 * S_i = S_{i+1}·len_{i+1}). Linear, always valid by promise; the inverse of `merge` on in-range indices.
 *
 * Vector rule: the last upper dim gets (gcd(V, len_last), S); the others are unknown.
 */
export class Unmerge extends TransformBase {
  readonly kind = 'unmerge';
  readonly lowerArity = 1;
  readonly upperArity: number;
  readonly upperLengths: readonly SymInt[];
  readonly lowerLengths: readonly SymInt[];
  readonly isAlwaysValid = true;
  readonly isLinear = true;
  /** Row-major strides of the upper dims. */
  readonly strides: readonly SymInt[];

  readonly lengths: readonly SymInt[];

  constructor(lengths: readonly SymInt[]) {
    super(lengths);
    this.lengths = lengths;
    lengths.forEach((l, i) => checkLength(l, `unmerge lengths[${i}]`));
    if (lengths.length === 0) checkLength(0, 'unmerge lengths (at least one)');
    this.upperArity = lengths.length;
    this.upperLengths = [...lengths];
    this.lowerLengths = [product(lengths)];
    const strides: SymInt[] = new Array<SymInt>(lengths.length);
    let s: SymInt = 1;
    for (let i = lengths.length - 1; i >= 0; i--) {
      strides[i] = s;
      s = mul(s, lengths[i]!);
    }
    this.strides = strides;
  }

  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep {
    const S = this.values(this.strides, bindings);
    const n = S.length;
    const l = low[0]!;
    return {
      lower: (h) => {
        let acc = 0;
        for (let i = 0; i < n; i++) acc += h[up[i]!]! * S[i]!;
        h[l] = acc;
      },
      update: (h, dh) => {
        let acc = 0;
        for (let i = 0; i < n; i++) acc += dh[up[i]!]! * S[i]!;
        dh[l] = acc;
        h[l] = h[l]! + acc;
      },
      valid: () => true,
    };
  }

  lowerSymbolic(up: readonly SymInt[]): SymInt[] {
    return [add(...up.map((u, i) => mul(u, this.strides[i]!)))];
  }

  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides {
    const n = this.upperArity;
    const lengths = new Array<number>(n).fill(-1);
    const strides = new Array<number>(n).fill(-1);
    lengths[n - 1] = vectorGcd(lower.lengths[0]!, this.lengths[n - 1]!);
    strides[n - 1] = lower.strides[0]!;
    return { lengths, strides };
  }

  toString(): string {
    return `unmerge(${formatList(this.lengths)})`;
  }
}

/** Splits one lower dim into upper dims of `lengths`, row-major (last upper dim fastest). */
export function unmerge(lengths: readonly SymInt[]): Unmerge {
  return new Unmerge(lengths);
}
