// Reading one token's row back from the paged FP8 MLA latent cache.
import {
  DSA_MLA_NOPE_DIM,
  DSA_MLA_PAGE_BYTES,
  DSA_MLA_ROPE_DIM,
  DSA_MLA_ROPE_OFFSET,
  DSA_MLA_SCALE_OFFSET,
  DSA_MLA_TILES,
  dsaMlaTokenOffset,
} from '../dsaMlaCacheLayout.ts';
import { dsaCheckMlaSlot, dsaMlaCachePages } from './dsaMlaCachePages.ts';
import type { DsaQuantizedMlaLatent } from './dsaQuantizeMlaLatent.ts';

/**
 * The row stored in cache slot `slot` (= page · 64 + offset), as one quantized token (copies): its 512 e4m3 bytes at
 * `page · pageStride + offset · 656`, the 4 little-endian fp32 scales after them and the 64 little-endian bf16 RoPE
 * values after those. `dsaDequantizeMlaLatent` turns it into the bf16 values an attention kernel reads.
 * @throws DsaArgumentError for a bad page stride or cache length, or a slot outside [0, pages·64).
 */
export function dsaReadMlaCacheToken(cache: Uint8Array, slot: number, pageStride: number = DSA_MLA_PAGE_BYTES): DsaQuantizedMlaLatent {
  dsaCheckMlaSlot('slot', slot, dsaMlaCachePages(cache, pageStride));
  const at = dsaMlaTokenOffset(slot, pageStride);
  const view = new DataView(cache.buffer, cache.byteOffset, cache.byteLength);
  return {
    nope: cache.slice(at, at + DSA_MLA_NOPE_DIM),
    scales: Float32Array.from({ length: DSA_MLA_TILES }, (_, i) => view.getFloat32(at + DSA_MLA_SCALE_OFFSET + 4 * i, true)),
    rope: Uint16Array.from({ length: DSA_MLA_ROPE_DIM }, (_, i) => view.getUint16(at + DSA_MLA_ROPE_OFFSET + 2 * i, true)),
  };
}
