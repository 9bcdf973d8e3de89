// The page count of a paged FP8 MLA latent cache buffer.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_STRIDE_ALIGN, DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';

/**
 * Throws unless `pageStride` is a valid page stride of the MLA cache: an integer ≥ 41984 (64 rows of 656 B) and a multiple
 * of 16 (FlashMLA's tests pad pages to 65 · 656 B).
 */
export function dsaCheckMlaPageStride(argument: string, pageStride: unknown): asserts pageStride is number {
  if (
    typeof pageStride !== 'number' ||
    !Number.isSafeInteger(pageStride) ||
    pageStride < DSA_MLA_PAGE_BYTES ||
    pageStride % DSA_MLA_PAGE_STRIDE_ALIGN !== 0
  )
    throw new DsaArgumentError(
      argument,
      `must be an integer ≥ ${DSA_MLA_PAGE_BYTES} (64 × 656 B) and a multiple of ${DSA_MLA_PAGE_STRIDE_ALIGN}`,
      pageStride,
    );
}

/**
 * The pages an MLA cache buffer holds: `cache.length / pageStride`. Page p starts at byte p · pageStride and holds 64 token
 * rows of 656 bytes (DSA_MLA_TOKEN_BYTES), token-major; bytes past 41984 in a page are padding. Slots 0 … pages·64 − 1 exist.
 * @throws DsaArgumentError for a bad page stride, or a length that is not a positive multiple of it.
 */
export function dsaMlaCachePages(cache: Uint8Array, pageStride: number = DSA_MLA_PAGE_BYTES): number {
  dsaCheckMlaPageStride('pageStride', pageStride);
  if (cache.length === 0 || cache.length % pageStride !== 0)
    throw new DsaArgumentError('cache', `must hold a positive whole number of ${pageStride}-byte pages`, cache.length);
  return cache.length / pageStride;
}

/** Throws unless `slot` is an integer in [0, pages · 64). */
export function dsaCheckMlaSlot(argument: string, slot: number, pages: number): void {
  const slots = pages * DSA_MLA_PAGE_TOKENS;
  if (!Number.isSafeInteger(slot) || slot < 0 || slot >= slots)
    throw new DsaArgumentError(argument, `must be an integer in [0, ${slots})`, slot);
}
