// Writing quantized index keys into the paged cache: what the GPU cache writer must leave in memory.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS, dsaCacheScaleOffset, dsaCacheValueOffset } from '../dsaShape.ts';
import { dsaCheckLength } from './dsaCheckLength.ts';
import { dsaIndexCachePages } from './dsaIndexCachePages.ts';

/** Tokens to store: token t (128 e4m3 values and one scale) goes to cache slot `slots[t]`. */
export interface DsaIndexCacheWrite {
  /** The paged cache, written in place (pages of 8448 B, see {@link DSA_PAGE_BYTES}). */
  readonly cache: Uint8Array;
  /** [tokens][128] e4m3fn bit patterns. */
  readonly values: Uint8Array;
  /** [tokens] fp32 scales. */
  readonly scales: Float32Array;
  /** [tokens] slot = page · 64 + offset, or −1 to skip the token (vLLM's padded slot mapping). */
  readonly slots: Int32Array;
}

/** Throws unless every slot is −1 or a distinct slot of the cache. */
function checkSlots(slots: Int32Array, slotCount: number): void {
  const seen = new Set<number>();
  slots.forEach((slot, t) => {
    if (slot === -1) return;
    if (slot < 0 || slot >= slotCount) throw new DsaArgumentError(`slots[${t}]`, `must be −1 or a slot in [0, ${slotCount})`, slot);
    if (seen.has(slot)) throw new DsaArgumentError(`slots[${t}]`, 'must not repeat another token’s slot', slot);
    seen.add(slot);
  });
}

/**
 * Stores every token whose slot is not −1: its 128 e4m3 bytes at `page·8448 + offset·128` and its fp32
 * scale, little-endian, at `page·8448 + 8192 + offset·4`, where page = slot >> 6 and offset = slot & 63.
 * No other byte of the cache changes (property-tested). Returns the cache.
 * @throws DsaArgumentError for a bad cache length, mismatched lengths, or a slot that is out of range or
 * repeated (the GPU writes tokens in no defined order, so a repeated slot would be a race).
 */
export function dsaWriteIndexCacheReference(write: DsaIndexCacheWrite): Uint8Array {
  const { cache, values, scales, slots } = write;
  const slotCount = dsaIndexCachePages(cache) * DSA_PAGE_TOKENS;
  dsaCheckLength('values', values, slots.length * DSA_INDEX_HEAD_DIM, 'slots.length·128');
  dsaCheckLength('scales', scales, slots.length, 'slots.length');
  checkSlots(slots, slotCount);
  const view = new DataView(cache.buffer, cache.byteOffset, cache.byteLength);
  slots.forEach((slot, t) => {
    if (slot === -1) return;
    cache.set(values.subarray(t * DSA_INDEX_HEAD_DIM, (t + 1) * DSA_INDEX_HEAD_DIM), dsaCacheValueOffset(slot));
    view.setFloat32(dsaCacheScaleOffset(slot), scales[t]!, true);
  });
  return cache;
}
