import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomBlockTable } from '../testing/dsaRandomInputs.ts';
import { dsaSlotOfPosition, dsaSlotsFromBlockTable } from './dsaSlotsFromBlockTable.ts';

describe('dsaSlotsFromBlockTable', () => {
  it('maps positions through the table (golden)', () => {
    const table = Int32Array.from([7, 2, 5, 0]); // 2 sequences × 2 pages
    expect(Array.from(dsaSlotsFromBlockTable(table, 2, 1, [0, 63, 64, 127, -1]))).toEqual([320, 383, 0, 63, -1]);
    expect(Array.from(dsaSlotsFromBlockTable(table, 2, 0, Int32Array.from([65, 1])))).toEqual([129, 449]);
    expect(dsaSlotOfPosition(table, 2, 0, 0)).toBe(448);
  });

  it('keeps the offset within the page, takes the page from the table, and is injective for distinct pages', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        (seed, batch, maxPages) => {
          const rng = new Prng(seed);
          const table = dsaRandomBlockTable(batch, maxPages, rng, batch * maxPages + 3);
          const seen = new Set<number>();
          for (let b = 0; b < batch; b++) {
            const positions = Int32Array.from({ length: maxPages * 64 }, (_, p) => p);
            const slots = dsaSlotsFromBlockTable(table, maxPages, b, positions);
            slots.forEach((slot, p) => {
              expect(slot % 64).toBe(p % 64);
              expect(Math.floor(slot / 64)).toBe(table[b * maxPages + Math.floor(p / 64)]);
              expect(seen.has(slot)).toBe(false);
              seen.add(slot);
            });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('rejects positions past the table, negative entries, unknown sequences and ragged tables', () => {
    const table = Int32Array.from([3, -1]);
    expect(() => dsaSlotsFromBlockTable(table, 2, 0, [128])).toThrow(/positions\[0\]/);
    expect(() => dsaSlotsFromBlockTable(table, 2, 0, [-2])).toThrow(DsaArgumentError);
    expect(() => dsaSlotsFromBlockTable(table, 2, 0, [64])).toThrow(/blockTable\[1\]/);
    expect(dsaSlotsFromBlockTable(table, 2, 0, [63])[0]).toBe(255);
    expect(() => dsaSlotsFromBlockTable(table, 2, 1, [0])).toThrow(/sequence/);
    expect(() => dsaSlotsFromBlockTable(table, 3, 0, [0])).toThrow(/whole rows/);
    expect(() => dsaSlotsFromBlockTable(table, 0, 0, [0])).toThrow(/maxPages/);
  });
});
