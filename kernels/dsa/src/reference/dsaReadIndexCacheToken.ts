// Reading one token back from the paged index-key cache.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS, dsaCacheScaleOffset, dsaCacheValueOffset } from '../dsaShape.ts';
import type { DsaIndexKeyToken } from './dsaQuantizeIndexKeys.ts';
import { dsaIndexCachePages } from './dsaIndexCachePages.ts';

/**
 * The token stored in cache slot `slot` (= page · 64 + offset): a copy of its 128 e4m3 bytes at
 * `page·8448 + offset·128` and its fp32 scale, little-endian, at `page·8448 + 8192 + offset·4`.
 * @throws DsaArgumentError for a bad cache length or a slot outside [0, pages·64).
 */
export function dsaReadIndexCacheToken(cache: Uint8Array, slot: number): DsaIndexKeyToken {
  const slots = dsaIndexCachePages(cache) * DSA_PAGE_TOKENS;
  if (!Number.isSafeInteger(slot) || slot < 0 || slot >= slots)
    throw new DsaArgumentError('slot', `must be an integer in [0, ${slots})`, slot);
  const at = dsaCacheValueOffset(slot);
  const values = cache.slice(at, at + DSA_INDEX_HEAD_DIM);
  const scale = new DataView(cache.buffer, cache.byteOffset, cache.byteLength).getFloat32(dsaCacheScaleOffset(slot), true);
  return { values, scale };
}
