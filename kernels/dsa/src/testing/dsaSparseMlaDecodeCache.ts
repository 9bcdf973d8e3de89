// The FP8 cache of a random decode problem: every slot's latent row quantized and written where the decode reads it.
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_TOKENS, dsaMlaCacheSpan } from '../dsaMlaCacheLayout.ts';
import { dsaQuantizeMlaLatent } from '../reference/dsaQuantizeMlaLatent.ts';
import { dsaWriteMlaCacheReference } from '../reference/dsaWriteMlaCacheReference.ts';
import type { DsaRandomSparseMlaDecode } from './dsaSparseMlaInputs.ts';

/**
 * The paged cache (pages `pageStride` bytes apart, default unpadded) holding slot s = latent row s for every slot of
 * the problem's numPages · 64: dsaQuantizeMlaLatent then dsaWriteMlaCacheReference. Padding bytes are 0xa5 (so a kernel
 * reading them shows).
 */
export function dsaSparseMlaDecodeCache(
  x: Pick<DsaRandomSparseMlaDecode, 'latent' | 'numPages'>,
  pageStride: number = DSA_MLA_PAGE_BYTES,
): Uint8Array {
  const slots = x.numPages * DSA_MLA_PAGE_TOKENS;
  const cache = new Uint8Array(dsaMlaCacheSpan(x.numPages, pageStride)).fill(0xa5);
  const latent = dsaQuantizeMlaLatent(x.latent, slots);
  return dsaWriteMlaCacheReference({ cache, pageStride, latent, slots: Int32Array.from({ length: slots }, (_, i) => i) });
}
