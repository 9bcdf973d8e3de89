import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';
import { dsaIndexerDecodeReference } from '../reference/dsaIndexerDecodeReference.ts';
import { dsaIndexerPrefillReference } from '../reference/dsaIndexerPrefillReference.ts';
import { dsaReadIndexCacheToken } from '../reference/dsaReadIndexCacheToken.ts';
import { dsaSlotsFromBlockTable } from '../reference/dsaSlotsFromBlockTable.ts';
import {
  dsaRandomBlockTable,
  dsaRandomContextLens,
  dsaRandomDecodeInput,
  dsaRandomE4m3Bits,
  dsaRandomIndexKeys,
  dsaRandomIndexWeights,
  dsaRandomPrefillInput,
  dsaRandomTopkLogits,
} from './dsaRandomInputs.ts';

const seedArb = fc.integer({ min: 0, max: 2 ** 31 - 1 });

describe('dsaRandomInputs', () => {
  it('is reproducible from the seed and differs between seeds', () => {
    const draw = (seed: number): unknown[] => {
      const rng = new Prng(seed);
      return [
        dsaRandomE4m3Bits(64, rng),
        dsaRandomIndexWeights(2, 4, rng),
        dsaRandomIndexKeys(2, rng),
        dsaRandomTopkLogits(2, 50, rng),
        dsaRandomBlockTable(2, 3, rng),
      ];
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('draws every e4m3 pattern but the two NaNs, and no NaN', () => {
    const bits = dsaRandomE4m3Bits(60_000, new Prng(1));
    const seen = new Set(bits);
    expect(seen.has(0x7f) || seen.has(0xff)).toBe(false);
    expect(seen.size).toBe(254);
  });

  it('draws weights at the folded magnitude: |w| < 7·H^-½·128^-½·2^-4, fp32, both signs', () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom(32, 64), (seed, heads) => {
        const w = dsaRandomIndexWeights(50, heads, new Prng(seed));
        const limit = (7 / Math.sqrt(heads) / Math.sqrt(128)) * 2 ** -4;
        expect(w.every((x) => Number.isFinite(x) && Math.abs(x) < limit)).toBe(true);
        expect(w.some((x) => x < 0) && w.some((x) => x > 0)).toBe(true);
      }),
      { numRuns: 20 },
    );
  });

  it('draws bf16-valued keys, all-zero tokens at the requested rate', () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom(1e-3, 1, 50), (seed, stddev) => {
        const keys = dsaRandomIndexKeys(20, new Prng(seed), { stddev });
        expect(keys.every((x) => roundTo('bf16', x) === x)).toBe(true);
        expect(keys.some((x) => x !== 0)).toBe(true);
      }),
      { numRuns: 20 },
    );
    expect(dsaRandomIndexKeys(5, new Prng(2), { zeroTokenRate: 1 }).every((x) => x === 0)).toBe(true);
    expect(() => dsaRandomIndexKeys(5, new Prng(2), { zeroTokenRate: 2 })).toThrow(DsaArgumentError);
    expect(() => dsaRandomIndexKeys(5, new Prng(2), { stddev: 0 })).toThrow(/stddev/);
  });

  it('draws context lengths in range and block tables of distinct pages', () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 4 }),
        (seed, batch, maxPages, spare) => {
          const rng = new Prng(seed);
          const lens = dsaRandomContextLens(batch, 3, 70, rng);
          expect(lens.every((x) => x >= 3 && x <= 70)).toBe(true);
          const table = dsaRandomBlockTable(batch, maxPages, rng, batch * maxPages + spare);
          expect(table.length).toBe(batch * maxPages);
          expect(new Set(table).size).toBe(table.length);
          expect(table.every((p) => p >= 0 && p < batch * maxPages + spare)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
    expect(() => dsaRandomBlockTable(2, 2, new Prng(1), 3)).toThrow(/pages/);
    expect(() => dsaRandomContextLens(1, 5, 4, new Prng(1))).toThrow(/maxContext/);
  });

  it('draws top-k rows with ties, −∞ runs and (only when asked) NaNs', () => {
    const logits = dsaRandomTopkLogits(4, 500, new Prng(3), { distinctValues: 8 });
    for (let r = 0; r < 4; r++) {
      const row = Array.from(logits.subarray(r * 500, (r + 1) * 500));
      const finite = row.filter(Number.isFinite);
      expect(new Set(finite).size).toBeLessThanOrEqual(8);
      expect(finite.length).toBeGreaterThan(new Set(finite).size); // ties
      expect(row.includes(Number.NEGATIVE_INFINITY)).toBe(true);
      expect(row.some(Number.isNaN)).toBe(false);
      expect(finite.every((x) => Math.fround(x) === x)).toBe(true);
    }
    expect(Array.from(dsaRandomTopkLogits(1, 400, new Prng(3), { nanRate: 0.2 })).some(Number.isNaN)).toBe(true);
  });

  it('builds prefill problems the reference accepts, with causal or random windows', () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.constantFrom('causal' as const, 'random' as const),
        fc.constantFrom('fp32' as const, 'ue8m0' as const),
        (seed, windows, scaleFormat) => {
          const x = dsaRandomPrefillInput({ S: 3, H: 4, Skv: 9, windows, scaleFormat }, new Prng(seed));
          expect(dsaIndexerPrefillReference(x).length).toBe(27);
          for (let t = 0; t < 3; t++) {
            expect(0 <= x.windowStart[t]! && x.windowStart[t]! <= x.windowEnd[t]! && x.windowEnd[t]! <= 9).toBe(true);
            if (windows === 'causal') expect([x.windowStart[t], x.windowEnd[t]]).toEqual([0, 9 - 3 + t + 1]);
          }
          if (scaleFormat === 'ue8m0') expect(x.kScales.every((s) => Number.isInteger(Math.log2(s)))).toBe(true);
        },
      ),
      { numRuns: 20 },
    );
    expect(() => dsaRandomPrefillInput({ S: 4, H: 1, Skv: 3 }, new Prng(1))).toThrow(/Skv/);
  });

  it('builds decode problems whose cache holds each sequence’s tokens at their slots and 0xff elsewhere', () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(1, 2),
        fc.integer({ min: 1, max: 140 }),
        (seed, B, nextN, maxContext) => {
          const { input, keys } = dsaRandomDecodeInput({ B, nextN, H: 2, maxContext }, new Prng(seed));
          expect(input.maxPages).toBe(Math.ceil(maxContext / 64));
          expect(input.cache.length).toBe((B * input.maxPages + 1) * DSA_PAGE_BYTES);
          expect(input.contextLens.every((x) => x >= Math.min(nextN, maxContext) && x <= maxContext)).toBe(true);
          expect(dsaIndexerDecodeReference(input).length).toBe(B * nextN * maxContext);
          const written = new Set<number>();
          for (let b = 0; b < B; b++) {
            expect(keys[b]!.length).toBe(input.contextLens[b]! * 128);
            const positions = Int32Array.from({ length: input.contextLens[b]! }, (_, p) => p);
            dsaSlotsFromBlockTable(input.blockTable, input.maxPages, b, positions).forEach((slot) => {
              written.add(slot);
              expect(dsaReadIndexCacheToken(input.cache, slot).scale).toBeGreaterThan(0);
            });
          }
          const slots = (input.cache.length / DSA_PAGE_BYTES) * 64;
          for (let slot = 0; slot < slots; slot++) {
            if (written.has(slot)) continue;
            const token = dsaReadIndexCacheToken(input.cache, slot);
            expect(token.values.every((v) => v === 0xff) && Number.isNaN(token.scale)).toBe(true);
          }
        },
      ),
      { numRuns: 20 },
    );
  });
});
