import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_PAGE_BYTES, DSA_MLA_TOKEN_BYTES, dsaMlaCacheSpan, dsaMlaTokenOffset } from '../dsaMlaCacheLayout.ts';
import { dsaRandomMlaLatent } from '../testing/dsaRandomMlaLatent.ts';
import { dsaMlaCachePages } from './dsaMlaCachePages.ts';
import { dsaDequantizeMlaLatent, dsaQuantizeMlaLatent, type DsaQuantizedMlaLatent } from './dsaQuantizeMlaLatent.ts';
import { dsaReadMlaCacheToken } from './dsaReadMlaCacheToken.ts';
import { dsaWriteMlaCacheReference } from './dsaWriteMlaCacheReference.ts';

const PADDED = 65 * 656;

/** Token `t` of a quantized batch, as the reader returns one. */
function tokenOf(q: DsaQuantizedMlaLatent, t: number): DsaQuantizedMlaLatent {
  return { nope: q.nope.slice(t * 512, t * 512 + 512), scales: q.scales.slice(t * 4, t * 4 + 4), rope: q.rope.slice(t * 64, t * 64 + 64) };
}

/** Quantized rows with every byte distinct enough to notice misplacement. */
function patterned(tokens: number): DsaQuantizedMlaLatent {
  return {
    nope: Uint8Array.from({ length: tokens * 512 }, (_, i) => (i * 7 + 3) % 0x7e),
    scales: Float32Array.from({ length: tokens * 4 }, (_, i) => 2 ** (i - 5)),
    rope: Uint16Array.from({ length: tokens * 64 }, (_, i) => 0x3f80 + i),
  };
}

const writeArb = fc
  .record({ pages: fc.integer({ min: 1, max: 3 }), tokens: fc.integer({ min: 0, max: 24 }), padded: fc.boolean() })
  .chain(({ pages, tokens, padded }) =>
    fc.record({
      pages: fc.constant(pages),
      pageStride: fc.constant(padded ? PADDED : DSA_MLA_PAGE_BYTES),
      slots: fc.uniqueArray(fc.integer({ min: 0, max: pages * 64 - 1 }), { minLength: tokens, maxLength: tokens }),
      skip: fc.array(fc.boolean(), { minLength: tokens, maxLength: tokens }),
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fill: fc.integer({ min: 0, max: 255 }),
    }),
  );

describe('the MLA cache layout', () => {
  it('has 656-byte rows, 41984-byte pages, rows at page · stride + offset · 656 (golden)', () => {
    expect(DSA_MLA_TOKEN_BYTES).toBe(656);
    expect(DSA_MLA_PAGE_BYTES).toBe(41984);
    expect(dsaMlaTokenOffset(0)).toBe(0);
    expect(dsaMlaTokenOffset(65)).toBe(41984 + 656);
    expect(dsaMlaTokenOffset(130, PADDED)).toBe(2 * PADDED + 2 * 656);
    expect(dsaMlaCacheSpan(3, PADDED)).toBe(2 * PADDED + 41984);
    expect(dsaMlaCacheSpan(0)).toBe(0);
  });

  it('counts pages of a whole-page buffer and names a bad stride or length', () => {
    expect(dsaMlaCachePages(new Uint8Array(2 * 41984))).toBe(2);
    expect(dsaMlaCachePages(new Uint8Array(3 * PADDED), PADDED)).toBe(3);
    expect(() => dsaMlaCachePages(new Uint8Array(41984 + 1))).toThrow(/cache/);
    expect(() => dsaMlaCachePages(new Uint8Array(0))).toThrow(DsaArgumentError);
    for (const bad of [41983, 41984 + 8, 1.5e5 + 0.5, -41984])
      expect(() => dsaMlaCachePages(new Uint8Array(2 * 42000), bad)).toThrow(/pageStride/);
  });
});

describe('dsaWriteMlaCacheReference and dsaReadMlaCacheToken', () => {
  it('lays a row out: e4m3, then little-endian fp32 scales, then little-endian bf16 rope (golden)', () => {
    const cache = new Uint8Array(2 * PADDED).fill(0xaa);
    const q = patterned(2);
    dsaWriteMlaCacheReference({ cache, pageStride: PADDED, latent: q, slots: Int32Array.from([65, -1]) });
    const at = PADDED + 656;
    expect(Array.from(cache.subarray(at, at + 512))).toEqual(Array.from(q.nope.subarray(0, 512)));
    // Scale 0 = 2^-5 = 0x3d000000; rope 0 = 0x3f80.
    expect(Array.from(cache.subarray(at + 512, at + 516))).toEqual([0x00, 0x00, 0x00, 0x3d]);
    expect(Array.from(cache.subarray(at + 528, at + 532))).toEqual([0x80, 0x3f, 0x81, 0x3f]);
    expect(cache[at - 1]).toBe(0xaa);
    expect(cache[at + 656]).toBe(0xaa);
    expect(cache.reduce((n, b) => n + (b === 0xaa ? 0 : 1), 0)).toBeLessThanOrEqual(656);
    expect(dsaReadMlaCacheToken(cache, 65, PADDED)).toEqual(tokenOf(q, 0));
  });

  it('stores every non-skipped row where the reader finds it and changes no other byte (padding included)', () => {
    fc.assert(
      fc.property(writeArb, ({ pages, pageStride, slots, skip, seed, fill }) => {
        const cache = new Uint8Array(pages * pageStride).fill(fill);
        const q = dsaQuantizeMlaLatent(dsaRandomMlaLatent(slots.length, new Prng(seed)), slots.length);
        const written = Int32Array.from(slots, (s, t) => (skip[t] ? -1 : s));
        expect(dsaWriteMlaCacheReference({ cache, pageStride, latent: q, slots: written })).toBe(cache);
        const owned = new Uint8Array(cache.length);
        written.forEach((slot, t) => {
          if (slot < 0) return;
          const row = dsaReadMlaCacheToken(cache, slot, pageStride);
          expect(row).toEqual(tokenOf(q, t));
          expect(dsaDequantizeMlaLatent(row)).toEqual(dsaDequantizeMlaLatent(tokenOf(q, t)));
          owned.fill(1, dsaMlaTokenOffset(slot, pageStride), dsaMlaTokenOffset(slot, pageStride) + 656);
        });
        expect(cache.filter((byte, i) => owned[i] === 0 && byte !== fill).length).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it('works on a cache that is a view into a larger buffer', () => {
    const cache = new Uint8Array(41984 + 16).subarray(16);
    dsaWriteMlaCacheReference({ cache, latent: patterned(1), slots: Int32Array.from([63]) });
    expect(dsaReadMlaCacheToken(cache, 63).scales[3]).toBe(2 ** -2);
  });

  it('names a bad slot, a repeated slot, mismatched lengths and a bad stride', () => {
    const cache = new Uint8Array(41984);
    const q = patterned(2);
    expect(() => dsaWriteMlaCacheReference({ cache, latent: q, slots: Int32Array.from([0, 64]) })).toThrow(/slots\[1\]/);
    expect(() => dsaWriteMlaCacheReference({ cache, latent: q, slots: Int32Array.from([3, -2]) })).toThrow(/slots\[1\]/);
    expect(() => dsaWriteMlaCacheReference({ cache, latent: q, slots: Int32Array.from([5, 5]) })).toThrow(/repeat/);
    expect(() => dsaWriteMlaCacheReference({ cache, latent: q, slots: Int32Array.from([5]) })).toThrow(/latent\.nope/);
    expect(() => dsaWriteMlaCacheReference({ cache, pageStride: 41990, latent: q, slots: Int32Array.from([0, 1]) })).toThrow(/pageStride/);
    expect(() => dsaReadMlaCacheToken(cache, 64)).toThrow(/slot/);
    expect(() => dsaReadMlaCacheToken(cache, -1)).toThrow(DsaArgumentError);
  });
});
