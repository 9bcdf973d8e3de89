// The fixed shapes of DeepSeek sparse attention's indexer (DeepSeek-V3.2; DeepGEMM's sm90 layouts).

/** Index head dim: every index query head and the shared index key have 128 dims. */
export const DSA_INDEX_HEAD_DIM = 128;

/** Index query heads the sm90 indexer serves (DeepSeek-V3.2 uses 64; some deployments 32). */
export const DSA_INDEX_HEADS: readonly number[] = Object.freeze([32, 64]);

/** Tokens per page of the paged index-key cache (DeepGEMM's block_kv on sm90). */
export const DSA_PAGE_TOKENS = 64;

/** Bytes one token takes in the index-key cache: 128 e4m3 values + one fp32 scale. */
export const DSA_INDEX_BYTES_PER_TOKEN = DSA_INDEX_HEAD_DIM + 4;

/** Bytes of one cache page: 64 × 128 B of e4m3 (token-major), then 64 × 4 B of fp32 scales. */
export const DSA_PAGE_BYTES = DSA_PAGE_TOKENS * DSA_INDEX_BYTES_PER_TOKEN;

/** Byte offset of the scales inside a page (after the e4m3 block). */
export const DSA_PAGE_SCALE_OFFSET = DSA_PAGE_TOKENS * DSA_INDEX_HEAD_DIM;

/** Queries per decode step the paged indexer serves (1, or 2 with one multi-token-prediction draft). */
export const DSA_NEXT_N: readonly number[] = Object.freeze([1, 2]);

/** Default number of selected tokens per query (DeepSeek-V3.2's index_topk). */
export const DSA_TOPK_DEFAULT = 2048;

/** Largest top-k the selection serves. */
export const DSA_TOPK_MAX = 4096;

/** Largest finite e4m3 magnitude: the quantizer maps a token's amax to it. */
export const DSA_E4M3_MAX = 448;

/** Smallest amax the quantizer divides by (an all-zero token gets scale 1e-4 / 448). */
export const DSA_AMAX_FLOOR = 1e-4;

/** How the per-token scale is stored: any fp32, or a power of two (ue8m0, DeepSeek-V3.2's scale_fmt). */
export type DsaScaleFormat = 'fp32' | 'ue8m0';

/** Byte offset of token `slot`'s e4m3 row in the cache (slot = page · 64 + offset). */
export function dsaCacheValueOffset(slot: number): number {
  const page = Math.floor(slot / DSA_PAGE_TOKENS);
  return page * DSA_PAGE_BYTES + (slot % DSA_PAGE_TOKENS) * DSA_INDEX_HEAD_DIM;
}

/** Byte offset of token `slot`'s fp32 scale in the cache. */
export function dsaCacheScaleOffset(slot: number): number {
  const page = Math.floor(slot / DSA_PAGE_TOKENS);
  return page * DSA_PAGE_BYTES + DSA_PAGE_SCALE_OFFSET + (slot % DSA_PAGE_TOKENS) * 4;
}
