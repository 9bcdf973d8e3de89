import { WgmmaBlockGemmSs } from '@tilekit/gemm';
import { TileDistributionEncoding } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaHeadSumPlan } from './dsaHeadSumPlan.ts';

const accumulator = (n: number) => new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: 64, tileN: n, tileK: 128 }).cEncoding;

describe('dsaHeadSumPlan over the wgmma fp8 accumulator', () => {
  it.each([
    [1, 32],
    [1, 64],
    [2, 32],
    [2, 64],
    [4, 32],
  ])('%i queries × %i heads: 2 row slots, quads, groups partition every element evenly', (queries, heads) => {
    const enc = accumulator(queries * heads);
    const plan = dsaHeadSumPlan(enc, queries, heads);
    expect(plan.rowSlots).toBe(2);
    expect(plan.shuffleMasks).toEqual([1, 2]);
    const all = plan.groups.flat(2).sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: enc.threadBufferSize }, (_, d) => d));
    for (const bySlot of plan.groups) for (const ds of bySlot) expect(ds).toHaveLength(heads / 4);
  });

  it('puts each group in one row and one query for every thread (checked against the encoding directly)', () => {
    const enc = accumulator(128);
    const plan = dsaHeadSumPlan(enc, 2, 64);
    for (let tid = 0; tid < 128; tid += 17) {
      const ps = enc.partitionIndexOf(tid);
      for (const [slot, bySlot] of plan.groups.entries()) {
        for (const [query, ds] of bySlot.entries()) {
          const xs = ds.map((d) => enc.calculateXIndexFromD(ps, d));
          expect(new Set(xs.map(([r]) => r)).size).toBe(1);
          expect(xs.every(([, c]) => Math.floor(c! / 64) === query)).toBe(true);
          expect(xs[0]![0]! % 16 >= 8 ? 1 : 0).toBe(slot);
        }
      }
    }
  });

  it('rejects a tile whose columns are not queries × heads, and an encoding whose lanes share no rows', () => {
    expect(() => dsaHeadSumPlan(accumulator(128), 1, 64)).toThrow(DsaArgumentError);
    // One thread per row (128 threads × 64 columns): no lane holds another lane's row.
    const rowPerThread = new TileDistributionEncoding({ hs: [[128], [64]], ps: [[{ major: 1, minor: 0 }]], ys: [{ major: 2, minor: 0 }] });
    expect(() => dsaHeadSumPlan(rowPerThread, 1, 64)).toThrow(DsaArgumentError);
  });
});
