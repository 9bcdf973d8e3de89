import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';
import { dsaIndexCachePages } from './dsaIndexCachePages.ts';
import { dsaReadIndexCacheToken } from './dsaReadIndexCacheToken.ts';
import { dsaWriteIndexCacheReference } from './dsaWriteIndexCacheReference.ts';

const D = 128;

/** The byte ranges slot `slot` occupies, from the layout's definition (8448-B pages: 64 rows of 128 B, then 64 fp32). */
function slotBytes(slot: number): [number, number][] {
  const page = Math.floor(slot / 64);
  const offset = slot % 64;
  return [
    [page * 8448 + offset * 128, page * 8448 + offset * 128 + 128],
    [page * 8448 + 8192 + offset * 4, page * 8448 + 8192 + offset * 4 + 4],
  ];
}

const writeArb = fc.record({ pages: fc.integer({ min: 1, max: 3 }), tokens: fc.integer({ min: 0, max: 40 }) }).chain(({ pages, tokens }) =>
  fc.record({
    pages: fc.constant(pages),
    slots: fc.uniqueArray(fc.integer({ min: 0, max: pages * 64 - 1 }), { minLength: tokens, maxLength: tokens }),
    skip: fc.array(fc.boolean(), { minLength: tokens, maxLength: tokens }),
    values: fc.uint8Array({ minLength: tokens * D, maxLength: tokens * D }),
    scales: fc.array(fc.float({ noNaN: true }), { minLength: tokens, maxLength: tokens }),
    fill: fc.integer({ min: 0, max: 255 }),
  }),
);

describe('dsaWriteIndexCacheReference', () => {
  it('lays a token out at its page: values token-major, then the little-endian fp32 scale (golden)', () => {
    const cache = new Uint8Array(2 * DSA_PAGE_BYTES).fill(0xaa);
    const values = new Uint8Array(3 * D);
    for (let i = 0; i < values.length; i++) values[i] = i % 251;
    dsaWriteIndexCacheReference({ cache, values, scales: Float32Array.from([1.5, -2, 7]), slots: Int32Array.from([65, 0, -1]) });
    // Slot 65 = page 1, offset 1: values at 8448 + 128, scale at 8448 + 8192 + 4; 1.5 = 0x3fc00000.
    expect(Array.from(cache.subarray(8448 + 128, 8448 + 256))).toEqual(Array.from(values.subarray(0, D)));
    expect(Array.from(cache.subarray(8448 + 8196, 8448 + 8200))).toEqual([0x00, 0x00, 0xc0, 0x3f]);
    // Slot 0: values at 0, scale at 8192; −2 = 0xc0000000.
    expect(Array.from(cache.subarray(0, D))).toEqual(Array.from(values.subarray(D, 2 * D)));
    expect(Array.from(cache.subarray(8192, 8196))).toEqual([0x00, 0x00, 0x00, 0xc0]);
    // The skipped token and every other byte: untouched.
    const touched = 2 * 132;
    expect(cache.reduce((n, b) => n + (b === 0xaa ? 0 : 1), 0)).toBeLessThanOrEqual(touched);
    expect(cache[8448 + 127]).toBe(0xaa);
    expect(cache[8448 + 256]).toBe(0xaa);
    expect(dsaReadIndexCacheToken(cache, 65)).toEqual({ values: values.subarray(0, D), scale: 1.5 });
  });

  it('stores every non-skipped token where the reader finds it and changes no other byte', () => {
    fc.assert(
      fc.property(writeArb, ({ pages, slots, skip, values, scales, fill }) => {
        const cache = new Uint8Array(pages * DSA_PAGE_BYTES).fill(fill);
        const written = Int32Array.from(slots, (s, t) => (skip[t] ? -1 : s));
        const returned = dsaWriteIndexCacheReference({ cache, values, scales: Float32Array.from(scales), slots: written });
        expect(returned).toBe(cache);
        const owned = new Uint8Array(cache.length);
        written.forEach((slot, t) => {
          if (slot < 0) return;
          const token = dsaReadIndexCacheToken(cache, slot);
          expect(Array.from(token.values)).toEqual(Array.from(values.subarray(t * D, (t + 1) * D)));
          expect(Object.is(token.scale, scales[t])).toBe(true);
          for (const [from, to] of slotBytes(slot)) owned.fill(1, from, to);
        });
        const strays = cache.filter((byte, i) => owned[i] === 0 && byte !== fill);
        expect(strays.length).toBe(0);
      }),
      { numRuns: 50 },
    );
  });

  it('works on a cache that is a view into a larger buffer', () => {
    const backing = new Uint8Array(DSA_PAGE_BYTES + 16).fill(0);
    const cache = backing.subarray(16);
    dsaWriteIndexCacheReference({
      cache,
      values: new Uint8Array(D).fill(0x38),
      scales: Float32Array.from([0.25]),
      slots: Int32Array.from([63]),
    });
    expect(backing[16 + 63 * 128]).toBe(0x38);
    expect(Array.from(backing.subarray(16 + 8192 + 63 * 4, 16 + 8192 + 64 * 4))).toEqual([0x00, 0x00, 0x80, 0x3e]); // 0.25 = 0x3e800000
    expect(dsaReadIndexCacheToken(cache, 63).scale).toBe(0.25);
  });

  it('rejects repeated or out-of-range slots, mismatched lengths and partial pages', () => {
    const cache = new Uint8Array(DSA_PAGE_BYTES);
    const write = (slots: number[], tokens = slots.length): unknown =>
      dsaWriteIndexCacheReference({
        cache,
        values: new Uint8Array(tokens * D),
        scales: new Float32Array(tokens),
        slots: Int32Array.from(slots),
      });
    expect(() => write([3, 3])).toThrow(/slots\[1\].*repeat/);
    expect(() => write([-1, -1])).not.toThrow();
    expect(() => write([64])).toThrow(/slots\[0\]/);
    expect(() => write([-2])).toThrow(DsaArgumentError);
    expect(() => write([1, 2], 1)).toThrow(/values/);
    expect(() =>
      dsaWriteIndexCacheReference({
        cache: new Uint8Array(100),
        values: new Uint8Array(0),
        scales: new Float32Array(0),
        slots: new Int32Array(0),
      }),
    ).toThrow(/cache/);
  });
});

describe('dsaReadIndexCacheToken and dsaIndexCachePages', () => {
  it('counts whole pages and rejects slots past them', () => {
    expect(dsaIndexCachePages(new Uint8Array(3 * DSA_PAGE_BYTES))).toBe(3);
    expect(() => dsaIndexCachePages(new Uint8Array(0))).toThrow(DsaArgumentError);
    expect(() => dsaIndexCachePages(new Uint8Array(DSA_PAGE_BYTES + 1))).toThrow(/8448/);
    const cache = new Uint8Array(DSA_PAGE_BYTES);
    expect(() => dsaReadIndexCacheToken(cache, 64)).toThrow(/slot/);
    expect(() => dsaReadIndexCacheToken(cache, -1)).toThrow(/slot/);
    expect(() => dsaReadIndexCacheToken(cache, 1.5)).toThrow(/slot/);
    expect(dsaReadIndexCacheToken(cache, 0).values.length).toBe(D);
  });

  it('returns a copy (later cache writes do not change a read token)', () => {
    const cache = new Uint8Array(DSA_PAGE_BYTES);
    const token = dsaReadIndexCacheToken(cache, 5);
    cache.fill(9);
    expect(token.values.every((v) => v === 0)).toBe(true);
  });
});
