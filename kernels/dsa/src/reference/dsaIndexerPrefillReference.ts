// The lightning indexer's prefill logits (DeepGEMM fp8_mqa_logits) on the CPU.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM } from '../dsaShape.ts';
import { dsaCheckCount, dsaCheckFinite, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaDecodeE4m3 } from './dsaDecodeE4m3.ts';
import type { DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';
import type { DsaIndexerLogits } from './dsaIndexerLogits.ts';
import { dsaIndexerScoreRow, dsaMaskedLogits } from './dsaIndexerScore.ts';

/** Inputs of the prefill indexer: S queries of H heads against Skv contiguous keys, each query with a key window. */
export interface DsaIndexerPrefillInput {
  /** [S][H][128] e4m3fn bit patterns (no NaN patterns). */
  readonly q: Uint8Array;
  /** [S][H] fp32 head weights (q scale and softmax scale folded in). */
  readonly weights: Float32Array;
  /** [Skv][128] e4m3fn bit patterns of the keys (no NaN patterns). */
  readonly k: Uint8Array;
  /** [Skv] fp32 key scales. */
  readonly kScales: Float32Array;
  /** [S] first key of query t's window (DeepGEMM's cu_seq_len_k_start). */
  readonly windowStart: Int32Array;
  /** [S] one past the last key of query t's window (cu_seq_len_k_end); 0 ≤ start ≤ end ≤ Skv. */
  readonly windowEnd: Int32Array;
  readonly S: number;
  readonly H: number;
  readonly Skv: number;
}

function checkWindows(input: DsaIndexerPrefillInput): void {
  for (let t = 0; t < input.S; t++) {
    const start = input.windowStart[t]!;
    const end = input.windowEnd[t]!;
    if (start < 0 || start > end) throw new DsaArgumentError(`windowStart[${t}]`, `must lie in [0, windowEnd[${t}] = ${end}]`, start);
    if (end > input.Skv) throw new DsaArgumentError(`windowEnd[${t}]`, `must be ≤ Skv = ${input.Skv}`, end);
  }
}

function checkPrefill(input: DsaIndexerPrefillInput): void {
  const { S, H, Skv } = input;
  dsaCheckCount('S', S, 0);
  dsaCheckCount('H', H);
  dsaCheckCount('Skv', Skv, 0);
  dsaCheckLength('q', input.q, S * H * DSA_INDEX_HEAD_DIM, 'S·H·128');
  dsaCheckLength('weights', input.weights, S * H, 'S·H');
  dsaCheckLength('k', input.k, Skv * DSA_INDEX_HEAD_DIM, 'Skv·128');
  dsaCheckLength('kScales', input.kScales, Skv, 'Skv');
  dsaCheckLength('windowStart', input.windowStart, S, 'S');
  dsaCheckLength('windowEnd', input.windowEnd, S, 'S');
  dsaCheckFinite('weights', input.weights);
  dsaCheckFinite('kScales', input.kScales);
  checkWindows(input);
}

function prefill(input: DsaIndexerPrefillInput, accumulation: DsaDotAccumulation | undefined): DsaIndexerLogits {
  checkPrefill(input);
  const { S, H, Skv } = input;
  const q = dsaDecodeE4m3('q', input.q);
  const keys = { values: dsaDecodeE4m3('k', input.k), scales: input.kScales };
  const out = dsaMaskedLogits(S, Skv);
  for (let t = 0; t < S; t++) {
    const query = { q, qOffset: t * H * DSA_INDEX_HEAD_DIM, weights: input.weights, weightsOffset: t * H, heads: H };
    dsaIndexerScoreRow(query, keys, input.windowStart[t]!, input.windowEnd[t]!, out, t * Skv, accumulation);
  }
  return out;
}

/**
 * The prefill indexer logits [S][Skv] fp32: for windowStart[t] ≤ s < windowEnd[t],
 * I[t][s] = kScales[s] · Σ_h weights[t][h] · ReLU(q8[t][h] · k8[s]), with q8, k8 the exactly decoded e4m3 values;
 * the dot products are exact, the sum over heads runs in ascending h in float64, ×kScales[s] comes last, and the
 * result is rounded once to fp32. Elsewhere −∞
 * (DeepGEMM's clean_logits). The GPU accumulates in fp32 or less (see {@link DsaDotAccumulation}), so compare
 * with {@link dsaIndexerPrefillReferenceWithBound} and {@link compareDsaLogits}, never bit for bit.
 * @throws DsaArgumentError for bad sizes or lengths, non-finite weights or scales, an e4m3 NaN pattern in q or k,
 * or a window outside 0 ≤ start ≤ end ≤ Skv.
 */
export function dsaIndexerPrefillReference(input: DsaIndexerPrefillInput): Float32Array {
  return prefill(input, undefined).logits;
}

/**
 * {@link dsaIndexerPrefillReference}'s logits with, per element in a window, the allowed |GPU − reference|:
 * bound = kScale · (Σ_h |w_h|·e_h + (H + 2)·2^-23 · Σ_h |w_h|·(ReLU(d_h) + e_h)) + 2^-126, where d_h is head h's exact
 * dot and e_h its {@link dsaHeadDotErrorBound} under `accumulation` (ReLU is 1-Lipschitz, so a dot off by e_h moves
 * its term by at most |w_h|·e_h; the second sum covers the fp32 epilogue: H − 1 adds, the w·ReLU and ×kScale products,
 * and the reference's own rounding, each ≤ 2^-24 relative, with a factor 2 of margin). Masked elements get bound 0.
 * Default `fp8TensorCore` (wgmma fp8 kernels); `fp32` is ~2^-16 relative, for kernels that accumulate on CUDA cores.
 */
export function dsaIndexerPrefillReferenceWithBound(
  input: DsaIndexerPrefillInput,
  accumulation: DsaDotAccumulation = 'fp8TensorCore',
): DsaIndexerLogits {
  return prefill(input, accumulation);
}
