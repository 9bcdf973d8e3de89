// The FP8 MLA latent cache of DeepSeek-V3.2 (FlashMLA's "V32_FP8Sparse"): one 656-byte row per token, pages of 64 tokens.
import { DSA_PAGE_TOKENS } from './dsaShape.ts';

/** Latent ("nope") dims of a token's KV row: quantized to e4m3 in the cache (also the value head dim). */
export const DSA_MLA_NOPE_DIM = 512;

/** RoPE dims of a token's KV row: stored as bf16, unchanged. */
export const DSA_MLA_ROPE_DIM = 64;

/** Dims of one latent KV row (512 + 64), the bf16 input of the cache writer. */
export const DSA_MLA_LATENT_DIM = DSA_MLA_NOPE_DIM + DSA_MLA_ROPE_DIM;

/** Values sharing one fp32 scale: the 512 latent dims are 4 tiles of 128. */
export const DSA_MLA_TILE = 128;

/** Scale tiles per token (512 / 128). */
export const DSA_MLA_TILES = DSA_MLA_NOPE_DIM / DSA_MLA_TILE;

/** Byte offset of the 4 fp32 scales inside a token's row (after the 512 e4m3 bytes). */
export const DSA_MLA_SCALE_OFFSET = DSA_MLA_NOPE_DIM;

/** Byte offset of the 64 bf16 RoPE values inside a token's row (after the scales). */
export const DSA_MLA_ROPE_OFFSET = DSA_MLA_SCALE_OFFSET + 4 * DSA_MLA_TILES;

/** Bytes of one token's row: 512 e4m3 + 4 × 4 B fp32 scales + 64 × 2 B bf16 RoPE = 656 (a multiple of 16). */
export const DSA_MLA_TOKEN_BYTES = DSA_MLA_ROPE_OFFSET + 2 * DSA_MLA_ROPE_DIM;

/** Tokens per page of the MLA cache (the same 64 as the index-key cache). */
export const DSA_MLA_PAGE_TOKENS = DSA_PAGE_TOKENS;

/** Bytes of one unpadded page (64 × 656 = 41984): the default and smallest page stride. */
export const DSA_MLA_PAGE_BYTES = DSA_MLA_PAGE_TOKENS * DSA_MLA_TOKEN_BYTES;

/** Alignment (bytes) of the page stride: pages are read and written with 16-byte accesses. */
export const DSA_MLA_PAGE_STRIDE_ALIGN = 16;

/** Smallest tile scale before the power-of-two rounding: s = 2^⌈log2(max(amax / 448, 1e-4))⌉, so ≥ 2^-13. */
export const DSA_MLA_SCALE_FLOOR = 1e-4;

/** Byte offset of token `slot`'s row (slot = page · 64 + offset) in a cache whose pages are `pageStride` bytes apart. */
export function dsaMlaTokenOffset(slot: number, pageStride: number = DSA_MLA_PAGE_BYTES): number {
  return Math.floor(slot / DSA_MLA_PAGE_TOKENS) * pageStride + (slot % DSA_MLA_PAGE_TOKENS) * DSA_MLA_TOKEN_BYTES;
}

/** Bytes a cache of `numPages` pages `pageStride` apart must span: (numPages − 1) · pageStride + 41984 (the last page unpadded). */
export function dsaMlaCacheSpan(numPages: number, pageStride: number = DSA_MLA_PAGE_BYTES): number {
  return numPages === 0 ? 0 : (numPages - 1) * pageStride + DSA_MLA_PAGE_BYTES;
}
