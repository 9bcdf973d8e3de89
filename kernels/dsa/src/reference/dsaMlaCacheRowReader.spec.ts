import { Prng } from '@tilekit/host';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';
import { dsaRandomSparseMlaDecodeInput } from '../testing/dsaSparseMlaInputs.ts';
import { dsaMlaCacheRowReader } from './dsaMlaCacheRowReader.ts';
import { dsaDequantizeMlaLatent, dsaQuantizeMlaLatent } from './dsaQuantizeMlaLatent.ts';
import { dsaSparseMlaDecodeReference } from './dsaSparseMlaReference.ts';
import { dsaSparseMlaRowsReader } from './dsaSparseMlaRowsReader.ts';
import { dsaWriteMlaCacheReference } from './dsaWriteMlaCacheReference.ts';

describe('dsaMlaCacheRowReader', () => {
  it('gives the decode reference over the written cache the result over the dequantized rows, any page stride', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 0, max: 3 }), (seed, pad) => {
        const pageStride = DSA_MLA_PAGE_BYTES + pad * 656;
        const input = dsaRandomSparseMlaDecodeInput({ b: 2, sQ: 2, hQ: 64, topk: 40, numPages: 2, invalidRate: 0.2 }, new Prng(seed));
        const tokens = input.numPages * DSA_MLA_PAGE_TOKENS;
        const latent = dsaQuantizeMlaLatent(input.latent, tokens);
        const cache = new Uint8Array(input.numPages * pageStride);
        dsaWriteMlaCacheReference({ cache, pageStride, latent, slots: Int32Array.from({ length: tokens }, (_, t) => t) });
        const fromCache = dsaSparseMlaDecodeReference({ ...input.problem, readRow: dsaMlaCacheRowReader(cache, pageStride) });
        const fromRows = dsaSparseMlaDecodeReference({
          ...input.problem,
          readRow: dsaSparseMlaRowsReader(dsaDequantizeMlaLatent(latent), tokens),
        });
        expect(fromCache).toEqual(fromRows);
      }),
      { numRuns: 6, seed: 21_28 },
    );
  });

  it('reads slots outside the cache as invalid', () => {
    const read = dsaMlaCacheRowReader(new Uint8Array(DSA_MLA_PAGE_BYTES));
    expect([-1, 64, 2 ** 31, 0.5].map((s) => read(s))).toEqual([undefined, undefined, undefined, undefined]);
    expect(read(63)).toHaveLength(576);
    expect(() => dsaMlaCacheRowReader(new Uint8Array(100))).toThrow(/cache/);
  });
});
