// The lightning indexer's paged decode logits (DeepGEMM fp8_paged_mqa_logits) on the CPU.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaCheckCount, dsaCheckFinite, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaDecodeE4m3 } from './dsaDecodeE4m3.ts';
import type { DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';
import { dsaIndexCachePages } from './dsaIndexCachePages.ts';
import type { DsaIndexerLogits } from './dsaIndexerLogits.ts';
import { dsaIndexerScoreRow, dsaMaskedLogits, type DsaDecodedKeys } from './dsaIndexerScore.ts';
import { dsaReadIndexCacheToken } from './dsaReadIndexCacheToken.ts';
import { dsaSlotOfPosition } from './dsaSlotsFromBlockTable.ts';

/** Inputs of the paged decode indexer: B sequences, nextN queries each (the last nextN positions), keys in the paged cache. */
export interface DsaIndexerDecodeInput {
  /** [B][nextN][H][128] e4m3fn bit patterns (no NaN patterns). */
  readonly q: Uint8Array;
  /** [B·nextN][H] fp32 head weights. */
  readonly weights: Float32Array;
  /** The paged index-key cache (pages of 8448 B, see {@link DSA_PAGE_BYTES}). */
  readonly cache: Uint8Array;
  /** [B][maxPages] page of each sequence's logical page (entries past a sequence's context are not read). */
  readonly blockTable: Int32Array;
  readonly maxPages: number;
  /** [B] tokens in each sequence's context, the nextN query tokens included; 0 … min(maxContext, maxPages·64). */
  readonly contextLens: Int32Array;
  readonly B: number;
  readonly nextN: number;
  readonly H: number;
  /** Columns of the output (DeepGEMM's max_context_len). */
  readonly maxContext: number;
}

function checkContextLens(input: DsaIndexerDecodeInput): void {
  const limit = Math.min(input.maxContext, input.maxPages * DSA_PAGE_TOKENS);
  input.contextLens.forEach((length, b) => {
    if (length < 0 || length > limit)
      throw new DsaArgumentError(`contextLens[${b}]`, `must lie in [0, min(maxContext, maxPages·64) = ${limit}]`, length);
  });
}

function checkDecode(input: DsaIndexerDecodeInput): void {
  const { B, nextN, H, maxPages, maxContext } = input;
  dsaCheckCount('B', B);
  dsaCheckCount('nextN', nextN);
  dsaCheckCount('H', H);
  dsaCheckCount('maxPages', maxPages);
  dsaCheckCount('maxContext', maxContext, 0);
  dsaIndexCachePages(input.cache);
  dsaCheckLength('q', input.q, B * nextN * H * DSA_INDEX_HEAD_DIM, 'B·nextN·H·128');
  dsaCheckLength('weights', input.weights, B * nextN * H, 'B·nextN·H');
  dsaCheckLength('blockTable', input.blockTable, B * maxPages, 'B·maxPages');
  dsaCheckLength('contextLens', input.contextLens, B, 'B');
  dsaCheckFinite('weights', input.weights);
  checkContextLens(input);
}

/** Sequence b's first `length` tokens, read from the cache through its block table and decoded. */
function gatherSequence(input: DsaIndexerDecodeInput, b: number, length: number): DsaDecodedKeys {
  const values = new Float64Array(length * DSA_INDEX_HEAD_DIM);
  const scales = new Float64Array(length);
  for (let p = 0; p < length; p++) {
    const slot = dsaSlotOfPosition(input.blockTable, input.maxPages, b, p, `position ${p} of sequence ${b}`);
    const token = dsaReadIndexCacheToken(input.cache, slot);
    values.set(dsaDecodeE4m3(`cache slot ${slot}`, token.values), p * DSA_INDEX_HEAD_DIM);
    if (!Number.isFinite(token.scale)) throw new DsaArgumentError(`cache slot ${slot}`, 'must hold a finite scale', token.scale);
    scales[p] = token.scale;
  }
  return { values, scales };
}

function decode(input: DsaIndexerDecodeInput, accumulation: DsaDotAccumulation | undefined): DsaIndexerLogits {
  checkDecode(input);
  const { B, nextN, H, maxContext } = input;
  const q = dsaDecodeE4m3('q', input.q);
  const out = dsaMaskedLogits(B * nextN, maxContext);
  for (let b = 0; b < B; b++) {
    const length = input.contextLens[b]!;
    const keys = gatherSequence(input, b, length);
    for (let r = 0; r < nextN; r++) {
      const row = b * nextN + r;
      const query = { q, qOffset: row * H * DSA_INDEX_HEAD_DIM, weights: input.weights, weightsOffset: row * H, heads: H };
      dsaIndexerScoreRow(query, keys, 0, Math.max(0, length - nextN + r + 1), out, row * maxContext, accumulation);
    }
  }
  return out;
}

/**
 * The paged decode indexer logits [B·nextN][maxContext] fp32. Row b·nextN + r is query r of sequence b, which sits
 * at position contextLens[b] − nextN + r (causal within the multi-token-prediction step). Position p is valid iff
 * p < contextLens[b] − nextN + r + 1; then the logit is the prefill formula
 * kScale_p · Σ_h w[row][h] · ReLU(q8[b][r][h] · k8_p) (exact dots, float64, rounded once to fp32) with token p read
 * from cache slot blockTable[b][p >> 6]·64 + (p & 63); every other column is −∞.
 * @throws DsaArgumentError for bad sizes or lengths, a context length outside [0, min(maxContext, maxPages·64)],
 * a block-table entry that a valid position reads outside the cache, non-finite weights or cached scales, or an
 * e4m3 NaN pattern in q or a read token.
 */
export function dsaIndexerDecodeReference(input: DsaIndexerDecodeInput): Float32Array {
  return decode(input, undefined).logits;
}

/**
 * {@link dsaIndexerDecodeReference}'s logits with the per-element error bound of
 * {@link dsaIndexerPrefillReferenceWithBound} (same rule, same `accumulation` models; 0 where masked).
 */
export function dsaIndexerDecodeReferenceWithBound(
  input: DsaIndexerDecodeInput,
  accumulation: DsaDotAccumulation = 'fp8TensorCore',
): DsaIndexerLogits {
  return decode(input, accumulation);
}
