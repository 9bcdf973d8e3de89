import { add, defineFunction, int32, mul } from '@tilekit/codegen';
import { hostCompiler, runHostFunctions, toolAvailable, type HostCall } from '@tilekit/codegen/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GroupedTilePartitioner } from './groupedTilePartitioner.ts';

const haveGxx = toolAvailable(hostCompiler());
if (!haveGxx) console.warn(`\n!!! SKIPPING the grouped tile partitioner host run: "${hostCompiler()}" not found. !!!\n`);

const policyArb = fc.record({
  tileM: fc.constantFrom(16, 64, 128, 256),
  tileN: fc.constantFrom(16, 64, 128, 256),
  groupM: fc.integer({ min: 1, max: 12 }),
});

describe('GroupedTilePartitioner (grouped rasterization)', () => {
  it('tileOf is a bijection from [0, gridSize) onto the block tiles', () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 3000 }), (policy, m, n) => {
        const p = new GroupedTilePartitioner(policy);
        const [tilesM, tilesN] = [Math.ceil(m / policy.tileM), Math.ceil(n / policy.tileN)];
        expect(p.gridSize(m, n)).toBe(tilesM * tilesN);
        const seen = new Set<number>();
        for (let pid = 0; pid < p.gridSize(m, n); pid++) {
          const [tm, tn] = p.tileOf(pid, m, n);
          if (tm < 0 || tm >= tilesM || tn < 0 || tn >= tilesN) return false;
          seen.add(tm * tilesN + tn);
        }
        return seen.size === tilesM * tilesN;
      }),
      { numRuns: 60 },
    );
  });

  it('golden: 3 groups of 2 M tiles over 5×3 tiles, M fastest inside a group, the last group one M tile high', () => {
    const p = new GroupedTilePartitioner({ tileM: 128, tileN: 128, groupM: 2 });
    const order = Array.from({ length: 15 }, (_, pid) => p.tileOf(pid, 5 * 128, 3 * 128 - 1).join(','));
    expect(order).toEqual(['0,0', '1,0', '0,1', '1,1', '0,2', '1,2', '2,0', '3,0', '2,1', '3,1', '2,2', '3,2', '4,0', '4,1', '4,2']);
    expect(() => new GroupedTilePartitioner({ tileM: 128, tileN: 128, groupM: 0 }, 'P')).toThrow(/P groupM/);
  });

  it.runIf(haveGxx)('the emitted lets (compiled with g++) compute tileOf · tile for every tile id', () => {
    const policy = { tileM: 128, tileN: 64, groupM: 3 };
    const p = new GroupedTilePartitioner(policy);
    // One int per call: m0 · 2^16 + n0 (both origins stay below 2^15 here).
    const fn = defineFunction({ name: 'tile_origin', returns: int32, params: { pid: int32, m: int32, n: int32 } }, (b, a) => {
      const { tilesM, tilesN } = p.emitTileCounts(b, a.m, a.n);
      const { m0, n0 } = p.emitTileOrigin(b, a.pid, p.emitGroupWidth(b, tilesN), tilesM);
      b.return(add(mul(m0, 65536), n0));
    });
    const cases: [number, number, number][] = [];
    for (const [m, n] of [
      [1000, 700],
      [128, 64],
      [129, 65],
      [3000, 90],
    ] as const) {
      for (let pid = 0; pid < p.gridSize(m, n); pid++) cases.push([pid, m, n]);
    }
    const calls: HostCall[] = cases.map(([pid, m, n]) => ({ fn, args: [pid, m, n] }));
    const got = runHostFunctions([fn], calls);
    const want = cases.map(([pid, m, n]) => {
      const [tm, tn] = p.tileOf(pid, m, n);
      return tm * policy.tileM * 65536 + tn * policy.tileN;
    });
    expect(got).toEqual(want);
  });
});
