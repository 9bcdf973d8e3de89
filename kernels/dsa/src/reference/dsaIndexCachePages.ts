// The page count of a paged index-key cache buffer.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';

/**
 * The pages a cache buffer holds: `cache.length / DSA_PAGE_BYTES` (8448 B a page: 64 × 128 B of e4m3,
 * then 64 × 4 B of fp32 scales). Slots 0 … pages·64 − 1 exist.
 * @throws DsaArgumentError unless the length is a positive multiple of 8448.
 */
export function dsaIndexCachePages(cache: Uint8Array): number {
  if (cache.length === 0 || cache.length % DSA_PAGE_BYTES !== 0) {
    throw new DsaArgumentError('cache', `must hold a positive whole number of ${DSA_PAGE_BYTES}-byte pages`, cache.length);
  }
  return cache.length / DSA_PAGE_BYTES;
}
