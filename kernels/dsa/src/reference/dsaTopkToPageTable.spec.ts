import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';
import { dsaRandomBlockTable } from '../testing/dsaRandomInputs.ts';
import { dsaReadIndexCacheToken } from './dsaReadIndexCacheToken.ts';
import { dsaSlotsFromBlockTable } from './dsaSlotsFromBlockTable.ts';
import { dsaTopkToPageTable } from './dsaTopkToPageTable.ts';
import { dsaWriteIndexCacheReference } from './dsaWriteIndexCacheReference.ts';

describe('dsaTopkToPageTable', () => {
  it('maps each row through its sequence’s table row and keeps −1 (golden)', () => {
    const table = Int32Array.from([3, 1, 0, 2]); // sequence 0: pages 3, 1; sequence 1: pages 0, 2
    const indices = Int32Array.from([0, 64, -1, 2, 127, -1]);
    expect(Array.from(dsaTopkToPageTable(indices, 2, 3, table, 2, 1))).toEqual([192, 64, -1, 2, 191, -1]);
    // Two rows per sequence (nextN = 2): rows 0, 1 → sequence 0; rows 2, 3 → sequence 1.
    const four = Int32Array.from([5, 5, 70, 6]);
    expect(Array.from(dsaTopkToPageTable(four, 4, 1, table, 2, 2))).toEqual([197, 197, 134, 6]);
  });

  it('names the same cache token as the logical position it came from', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 9 }),
        (seed, batch, nextN, k) => {
          const rng = new Prng(seed);
          const maxPages = 3;
          const table = dsaRandomBlockTable(batch, maxPages, rng, batch * maxPages + 1);
          const cache = new Uint8Array((batch * maxPages + 1) * DSA_PAGE_BYTES);
          // Token (b, p) carries its identity in its scale: b·1000 + p.
          for (let b = 0; b < batch; b++) {
            const positions = Int32Array.from({ length: maxPages * 64 }, (_, p) => p);
            const scales = Float32Array.from(positions, (p) => b * 1000 + p);
            dsaWriteIndexCacheReference({
              cache,
              values: new Uint8Array(positions.length * 128),
              scales,
              slots: dsaSlotsFromBlockTable(table, maxPages, b, positions),
            });
          }
          const rows = batch * nextN;
          const indices = Int32Array.from({ length: rows * k }, () => (rng.nextFloat() < 0.2 ? -1 : rng.nextInt(0, maxPages * 64 - 1)));
          const slots = dsaTopkToPageTable(indices, rows, k, table, maxPages, nextN);
          slots.forEach((slot, i) => {
            const position = indices[i]!;
            if (position === -1) return expect(slot).toBe(-1);
            const b = Math.floor(i / k / nextN);
            expect(dsaReadIndexCacheToken(cache, slot).scale).toBe(b * 1000 + position);
          });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('rejects bad sizes, indices below −1 or past the table, and negative pages under a selection', () => {
    const table = Int32Array.from([3, -1]);
    const map = (indices: number[], rows = 1, k = indices.length): unknown =>
      dsaTopkToPageTable(Int32Array.from(indices), rows, k, table, 2, 1);
    expect(() => map([0, -1])).not.toThrow();
    expect(() => map([-2])).toThrow(/indices\[0\]/);
    expect(() => map([1, 128])).toThrow(/indices\[1\]/);
    expect(() => map([64])).toThrow(/blockTable\[1\]/);
    expect(() => map([0, 1], 1, 3)).toThrow(/indices.*rows·k/);
    expect(() => map([0, 1], 2, 1)).toThrow(/blockTable/);
    expect(() => map([0], 1, 0)).toThrow(DsaArgumentError);
    expect(() => dsaTopkToPageTable(Int32Array.from([0]), 1, 1, table, 2, 0)).toThrow(/rowsPerSequence/);
  });
});
