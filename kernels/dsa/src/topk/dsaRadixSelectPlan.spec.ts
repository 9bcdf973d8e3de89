import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkLogitArbitrary } from '../testing/dsaTopkLogits.ts';
import { dsaTopkKey } from './dsaTopkKey.ts';
import { dsaRadixSelect, dsaRadixSelectPlan, dsaThresholdBin, dsaTopkRowKeys } from './dsaRadixSelectPlan.ts';

const f32 = (x: number): number => Math.fround(x);

describe('dsaTopkKey', () => {
  it('orders candidates as their values, ties −0 with +0, and maps −∞ and NaN to 0', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true }), fc.float({ noNaN: true }), (x, y) => {
        fc.pre(x !== Number.NEGATIVE_INFINITY && y !== Number.NEGATIVE_INFINITY);
        const [kx, ky] = [dsaTopkKey(x), dsaTopkKey(y)];
        expect(kx).toBeGreaterThan(0);
        expect(Math.sign(kx - ky)).toBe(Math.sign(x - y));
      }),
      { numRuns: 2000, seed: 20_01 },
    );
    expect(dsaTopkKey(-0)).toBe(dsaTopkKey(0));
    expect(dsaTopkKey(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(dsaTopkKey(Number.NaN)).toBe(0);
    expect(dsaTopkKey(-Number.NaN)).toBe(0);
    expect(dsaTopkKey(Number.POSITIVE_INFINITY)).toBe(0xff80_0000);
    expect(dsaTopkKey(f32(-3.4028234663852886e38))).toBe(0x0080_0000);
  });
});

describe('dsaThresholdBin', () => {
  it('finds the bin where the count from the top reaches the remaining count', () => {
    expect(dsaThresholdBin([5, 0, 3, 2], 1)).toEqual({ bin: 3, above: 0, count: 2 });
    expect(dsaThresholdBin([5, 0, 3, 2], 3)).toEqual({ bin: 2, above: 2, count: 3 });
    expect(dsaThresholdBin([5, 0, 3, 2], 6)).toEqual({ bin: 0, above: 5, count: 5 });
    expect(() => dsaThresholdBin([1, 1], 3)).toThrow(RangeError);
  });
});

describe('dsaRadixSelect (the kernel pass for pass on the CPU)', () => {
  it('equals dsaTopkReference on random rows (ties, −∞ runs, NaN, ±0, lengths, k past the row, tiny lists)', () => {
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 3, maxRowStride: 700 }), fc.constantFrom(1, 3, 16, 64, 16384), (rows, capacity) => {
        expect(dsaRadixSelect(rows, capacity)).toEqual(dsaTopkReference(rows));
      }),
      { numRuns: 1500, seed: 20_02 },
    );
  });

  it('reaches every path: all kept, early stop after pass 1 and 2, pass 3 from the list and from the row', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 1, maxRowStride: 700 }), fc.constantFrom(4, 16384), (rows, capacity) => {
        const keys = dsaTopkRowKeys(rows.logits, 0, rows.lengths === undefined ? rows.rowStride : Math.max(0, rows.lengths[0]!));
        const plan = dsaRadixSelectPlan(keys, rows.k, capacity);
        seen.add(plan.threshold === 0 ? 'all' : `${plan.passes}${plan.passes === 3 ? (plan.listed ? ' list' : ' row') : ''}`);
      }),
      { numRuns: 1500, seed: 20_03 },
    );
    expect([...seen].sort()).toEqual(['1', '2', '3 list', '3 row', 'all']);
  });

  it('selects among all-equal rows by position, and keeps candidates only', () => {
    const logits = new Float32Array(300).fill(0.5);
    expect([...dsaRadixSelect({ logits, rows: 1, rowStride: 300, k: 7 }, 16)]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const masked = Float32Array.from([Number.NaN, -Infinity, 1, -0, 0, Number.NaN]);
    expect([...dsaRadixSelect({ logits: masked, rows: 1, rowStride: 6, k: 4 }, 16)]).toEqual([2, 3, 4, -1]);
    expect([...dsaRadixSelect({ logits: masked, rows: 1, rowStride: 6, k: 2 }, 16)]).toEqual([2, 3]);
  });
});
