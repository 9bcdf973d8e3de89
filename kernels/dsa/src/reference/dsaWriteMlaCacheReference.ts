// Writing quantized MLA latent rows into the paged FP8 cache: what the GPU cache writer must leave in memory.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  DSA_MLA_NOPE_DIM,
  DSA_MLA_PAGE_BYTES,
  DSA_MLA_ROPE_DIM,
  DSA_MLA_ROPE_OFFSET,
  DSA_MLA_SCALE_OFFSET,
  DSA_MLA_TILES,
  dsaMlaTokenOffset,
} from '../dsaMlaCacheLayout.ts';
import { dsaCheckLength } from './dsaCheckLength.ts';
import { dsaCheckMlaSlot, dsaMlaCachePages } from './dsaMlaCachePages.ts';
import type { DsaQuantizedMlaLatent } from './dsaQuantizeMlaLatent.ts';

/** Rows to store: token t of `latent` goes to cache slot `slots[t]`. */
export interface DsaMlaCacheWrite {
  /** The paged cache, written in place: pages `pageStride` bytes apart, 64 rows of 656 B each. */
  readonly cache: Uint8Array;
  /** Bytes between pages: ≥ 41984 and a multiple of 16 (default 41984). */
  readonly pageStride?: number;
  /** The quantized rows ([tokens] of 512 e4m3, 4 fp32 scales, 64 bf16). */
  readonly latent: DsaQuantizedMlaLatent;
  /** [tokens] slot = page · 64 + offset, or −1 to skip the token. */
  readonly slots: Int32Array;
}

/** Throws unless every slot is −1 or a distinct slot of the cache. */
function checkSlots(slots: Int32Array, pages: number): void {
  const seen = new Set<number>();
  slots.forEach((slot, t) => {
    if (slot === -1) return;
    dsaCheckMlaSlot(`slots[${t}]`, slot, pages);
    if (seen.has(slot)) throw new DsaArgumentError(`slots[${t}]`, 'must not repeat another token’s slot', slot);
    seen.add(slot);
  });
}

/** Stores token `t`'s row at byte `at`: 512 e4m3 bytes, 4 little-endian fp32 scales, 64 little-endian bf16. */
function storeRow(view: DataView, cache: Uint8Array, at: number, latent: DsaQuantizedMlaLatent, t: number): void {
  cache.set(latent.nope.subarray(t * DSA_MLA_NOPE_DIM, (t + 1) * DSA_MLA_NOPE_DIM), at);
  for (let i = 0; i < DSA_MLA_TILES; i++) view.setFloat32(at + DSA_MLA_SCALE_OFFSET + 4 * i, latent.scales[t * DSA_MLA_TILES + i]!, true);
  for (let i = 0; i < DSA_MLA_ROPE_DIM; i++) view.setUint16(at + DSA_MLA_ROPE_OFFSET + 2 * i, latent.rope[t * DSA_MLA_ROPE_DIM + i]!, true);
}

/**
 * Stores every token whose slot is not −1 as one 656-byte row at `page · pageStride + offset · 656` (page = slot >> 6,
 * offset = slot & 63): bytes [0, 512) its e4m3 values, [512, 528) its 4 fp32 scales, [528, 656) its 64 bf16 RoPE
 * values, all little-endian. No other byte of the cache (padding included) changes (property-tested). Returns the cache.
 * @throws DsaArgumentError for a bad page stride or cache length, mismatched lengths, or a slot out of range or repeated
 * (the GPU writes tokens in no defined order, so a repeated slot would be a race).
 */
export function dsaWriteMlaCacheReference(write: DsaMlaCacheWrite): Uint8Array {
  const { cache, latent, slots } = write;
  const pageStride = write.pageStride ?? DSA_MLA_PAGE_BYTES;
  const pages = dsaMlaCachePages(cache, pageStride);
  const tokens = slots.length;
  dsaCheckLength('latent.nope', latent.nope, tokens * DSA_MLA_NOPE_DIM, 'slots.length·512');
  dsaCheckLength('latent.scales', latent.scales, tokens * DSA_MLA_TILES, 'slots.length·4');
  dsaCheckLength('latent.rope', latent.rope, tokens * DSA_MLA_ROPE_DIM, 'slots.length·64');
  checkSlots(slots, pages);
  const view = new DataView(cache.buffer, cache.byteOffset, cache.byteLength);
  slots.forEach((slot, t) => {
    if (slot !== -1) storeRow(view, cache, dsaMlaTokenOffset(slot, pageStride), latent, t);
  });
  return cache;
}
