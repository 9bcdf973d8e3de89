// The decoded-row reader of a paged FP8 MLA cache, what the sparse MLA decode reference reads: a slot's
// 576 values as the decode kernel sees them (bf16(e4m3 · scale) for the 512 latent dims, the bf16 RoPE as stored).
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';
import { dsaMlaCachePages } from './dsaMlaCachePages.ts';
import { dsaDequantizeMlaLatent } from './dsaQuantizeMlaLatent.ts';
import { dsaReadMlaCacheToken } from './dsaReadMlaCacheToken.ts';
import type { DsaSparseMlaRowReader } from './dsaSparseMlaRowsReader.ts';

/**
 * The reader of `cache` (pages `pageStride` bytes apart): slot s in [0, pages · 64) gives its dequantized row
 * (dsaReadMlaCacheToken then dsaDequantizeMlaLatent), any other index undefined (an invalid entry).
 * @throws DsaArgumentError for a bad page stride or a cache that is not whole pages.
 */
export function dsaMlaCacheRowReader(cache: Uint8Array, pageStride: number = DSA_MLA_PAGE_BYTES): DsaSparseMlaRowReader {
  const slots = dsaMlaCachePages(cache, pageStride) * DSA_MLA_PAGE_TOKENS;
  return (slot) =>
    Number.isSafeInteger(slot) && slot >= 0 && slot < slots
      ? dsaDequantizeMlaLatent(dsaReadMlaCacheToken(cache, slot, pageStride))
      : undefined;
}
