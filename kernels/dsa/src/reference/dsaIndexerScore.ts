// One query row of the lightning indexer against a run of keys (internal: shared by the prefill and decode references).
import { DSA_INDEX_HEAD_DIM } from '../dsaShape.ts';
import { dsaHeadDotErrorBound, type DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';
import type { DsaIndexerLogits } from './dsaIndexerLogits.ts';

const D = DSA_INDEX_HEAD_DIM;
/** Relative weight of the fp32 epilogue's roundings per head (w·ReLU products, the sum over heads, ×kScale): 2^-23. */
const EPILOGUE_UNIT = 2 ** -23;
/** An absolute floor under every bound (FLT_MIN), so that a zero logit never demands a bit-exact GPU zero. */
const BOUND_FLOOR = 2 ** -126;

/** One query row: its decoded heads [heads][128] and their weights. */
export interface DsaIndexerQuery {
  readonly q: Float64Array;
  readonly qOffset: number;
  readonly weights: Float32Array;
  readonly weightsOffset: number;
  readonly heads: number;
}

/** Decoded keys [tokens][128] and their scales. */
export interface DsaDecodedKeys {
  readonly values: Float64Array;
  readonly scales: ArrayLike<number>;
}

/** The exact dot product of two decoded 128-value rows (every product and partial sum is exact in float64). */
export function dsaHeadDot(q: Float64Array, qOffset: number, k: Float64Array, kOffset: number): number {
  let sum = 0;
  for (let i = 0; i < D; i++) sum += q[qOffset + i]! * k[kOffset + i]!;
  return sum;
}

/** kScale · Σ_h w_h · ReLU(q_h · k) in float64. */
function score(query: DsaIndexerQuery, k: Float64Array, kOffset: number, kScale: number): number {
  let sum = 0;
  for (let h = 0; h < query.heads; h++) {
    const dot = dsaHeadDot(query.q, query.qOffset + h * D, k, kOffset);
    if (dot > 0) sum += query.weights[query.weightsOffset + h]! * dot;
  }
  return kScale * sum;
}

/** kScale · (Σ_h |w_h|·e_h + (H + 2)·2^-23 · Σ_h |w_h|·(ReLU(d_h) + e_h)) + 2^-126, e_h the head's dot bound. */
function scoreBound(query: DsaIndexerQuery, k: Float64Array, kOffset: number, kScale: number, accumulation: DsaDotAccumulation): number {
  let dotPart = 0;
  let roundPart = 0;
  for (let h = 0; h < query.heads; h++) {
    const qOffset = query.qOffset + h * D;
    const dotError = dsaHeadDotErrorBound(query.q, qOffset, k, kOffset, accumulation);
    const weight = Math.abs(query.weights[query.weightsOffset + h]!);
    dotPart += weight * dotError;
    roundPart += weight * (Math.max(0, dsaHeadDot(query.q, qOffset, k, kOffset)) + dotError);
  }
  return Math.abs(kScale) * (dotPart + (query.heads + 2) * EPILOGUE_UNIT * roundPart) + BOUND_FLOOR;
}

/** Logits [rows][cols] all −∞ and a bound array of zeros. */
export function dsaMaskedLogits(rows: number, cols: number): DsaIndexerLogits {
  return { logits: new Float32Array(rows * cols).fill(Number.NEGATIVE_INFINITY), errorBound: new Float64Array(rows * cols) };
}

/**
 * Scores `query` against keys [start, end) into `out` at `outOffset + s`: the fp32-rounded logit, and its
 * error bound under `accumulation` when one is given (the bound array is left at 0 otherwise).
 */
export function dsaIndexerScoreRow(
  query: DsaIndexerQuery,
  keys: DsaDecodedKeys,
  start: number,
  end: number,
  out: DsaIndexerLogits,
  outOffset: number,
  accumulation: DsaDotAccumulation | undefined,
): void {
  for (let s = start; s < end; s++) {
    const kScale = keys.scales[s]!;
    out.logits[outOffset + s] = score(query, keys.values, s * D, kScale);
    if (accumulation !== undefined) out.errorBound[outOffset + s] = scoreBound(query, keys.values, s * D, kScale, accumulation);
  }
}
