/**
 * The online softmax of one row in the exp2 domain, as the attention kernels run it (CK-tile's
 * `BlockFmhaPipeline*` / FlashAttention-2): scores arrive in chunks; the state keeps the running
 * maximum `m` of the scaled scores (scale·log2 e·s) and the running sum `l` of 2^(scaled − m);
 * each new chunk rescales the old sum (and the caller's output accumulator) by 2^(m_old − m_new).
 * A row whose every score so far is −∞ (masked) keeps m = −∞, l = 0 and contributes nothing; its
 * final output is 0 and its log-sum-exp −∞, never NaN. Numbers only: the model the emitted
 * {@link BlockOnlineSoftmax} code follows, and what the property tests check it against.
 */
export interface OnlineSoftmaxState {
  /** Running maximum of scaled scores (−∞ before any unmasked score). */
  readonly m: number;
  /** Running sum of 2^(scaled score − m). */
  readonly l: number;
}

/** The state before any score. */
export const ONLINE_SOFTMAX_EMPTY: OnlineSoftmaxState = Object.freeze({ m: -Infinity, l: 0 });

/** What one chunk produces: the new state, the probabilities (unnormalized, 2^(scaled − m)) and the factor for old partial sums. */
export interface OnlineSoftmaxStep {
  readonly state: OnlineSoftmaxState;
  readonly p: Float64Array;
  /** 2^(m_old − m_new): multiply previous accumulations by it (0 when nothing was accumulated). */
  readonly correction: number;
}

/** The subtrahend of the exponent: m, or 0 while the row is fully masked (−∞ − −∞ would be NaN). */
export function softmaxShift(m: number): number {
  return m === -Infinity ? 0 : m;
}

/** One chunk of raw scores (−∞ for masked ones) with `scaleLog2 = scale · log2 e` (> 0). */
export function onlineSoftmaxUpdate(state: OnlineSoftmaxState, scores: ArrayLike<number>, scaleLog2: number): OnlineSoftmaxStep {
  let rowMax = -Infinity;
  for (let j = 0; j < scores.length; j++) rowMax = Math.max(rowMax, scores[j]!);
  const m = Math.max(state.m, rowMax * scaleLog2);
  const shift = softmaxShift(m);
  const correction = 2 ** (state.m - shift);
  const p = new Float64Array(scores.length);
  let sum = 0;
  for (let j = 0; j < scores.length; j++) {
    p[j] = 2 ** (scores[j]! * scaleLog2 - shift);
    sum += p[j]!;
  }
  return { state: { m, l: state.l * correction + sum }, p, correction };
}

/** The normalizer 1/l (0 for a row with nothing unmasked) and the natural-log LSE (−∞ then). */
export function onlineSoftmaxFinalize(state: OnlineSoftmaxState): { readonly inverseSum: number; readonly lse: number } {
  if (!(state.l > 0)) return { inverseSum: 0, lse: -Infinity };
  return { inverseSum: 1 / state.l, lse: (state.m + Math.log2(state.l)) * Math.LN2 };
}
