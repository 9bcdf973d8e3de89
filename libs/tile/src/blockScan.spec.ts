// The block scan's emitted structure: one barrier or three, the warp scan's shuffles and guards, the
// names it gives its variables, and the arguments it refuses. (It compiles with nvcc in
// tileOps.nvcc.spec.ts.)
import {
  BlockBuilder,
  cast,
  float32,
  gfx942,
  host,
  index,
  int32,
  makeVar,
  pointer,
  sm90a,
  SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { describe, expect, it } from 'vitest';
import { emitBlockExclusiveScan, type BlockScan, type BlockScanOptions } from './blockScan.ts';
import { TileEmitError } from './errors.ts';

/** A kernel that scans `v` over `threads` threads (the scratch: a parameter, for the host target too) and stores the exclusive sum and the total. */
function scanKernel(
  t: Target,
  threads: number,
  type: typeof int32 | typeof float32,
  options?: BlockScanOptions,
): { text: string; scan: BlockScan } {
  const src = new SourceBuilder({ dialect: t });
  let scan: BlockScan | undefined;
  src.function(
    {
      name: 'scan',
      qualifiers: t.kernelQualifiers(),
      params: { v: pointer(type), out: pointer(type), total: pointer(type), scratch: pointer(type) },
    },
    (b, p) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
      scan = emitBlockExclusiveScan(b, { target: t, threads, tid, scratch: p.scratch }, 's', b.let('mine', type, index(p.v, tid)), options);
      b.assign(index(p.out, tid), scan.exclusive);
      b.assign(index(p.total, tid), scan.total);
    },
  );
  return { text: src.render(), scan: scan! };
}

const count = (text: string, what: string): number => text.split(what).length - 1;

describe('emitBlockExclusiveScan', () => {
  it('oneBarrier: one barrier, a five-step warp scan, the warp totals scanned by every warp and read by shuffle', () => {
    const { text, scan } = scanKernel(sm90a, 256, int32);
    expect(count(text, '__syncthreads()')).toBe(1);
    // 5 steps over the lanes (1, 2, 4, 8, 16), 3 over the 8 warp totals (1, 2, 4).
    expect(count(text, '__shfl_up_sync(')).toBe(5 + 3);
    expect(count(text, '__shfl_sync(')).toBe(2);
    expect(text).toMatch(/int s_lane = tid & 31;/);
    expect(text).toMatch(/int s_warp = tid >> 5;/);
    expect(text).toContain('s_incl_up');
    expect(text).toContain('s_w_up');
    expect(text).toMatch(/s_lane > 0\)/);
    expect(text).not.toContain('s_in_warp');
    expect(text).toMatch(/s_excl = .*s_incl - mine/);
    expect(scan.exclusive).toMatchObject({ kind: 'var', name: 's_excl' });
    expect(scan.total).toMatchObject({ kind: 'var', name: 's_total' });
    expect(text).toMatch(/out\[tid\] = s_excl;/);
    expect(text).toMatch(/total\[tid\] = s_total;/);
  });

  it('threeBarrier: three barriers, the first warp scans the totals into the scratch, no subtraction of the value', () => {
    const { text } = scanKernel(sm90a, 128, float32, { variant: 'threeBarrier' });
    expect(count(text, '__syncthreads()')).toBe(3);
    // 5 lane steps, the lane before's inclusive sum, 2 steps over the 4 warp totals; no broadcast shuffle.
    expect(count(text, '__shfl_up_sync(')).toBe(5 + 1 + 2);
    expect(count(text, '__shfl_sync(')).toBe(0);
    expect(text).toMatch(/float s_in_warp = /);
    expect(text).toContain('s_wup');
    expect(text).toMatch(/s_lane >= 1\)/);
    expect(text).toMatch(/if \(s_warp == 0\)/);
    expect(text).not.toMatch(/s_incl - mine/);
    expect(text).toMatch(/float s_total = scratch\[3\];/);
  });

  it('a single warp scans no warp totals', () => {
    const { text } = scanKernel(sm90a, 32, int32);
    expect(count(text, '__shfl_up_sync(')).toBe(5);
    expect(text).not.toContain('s_w_up');
  });

  it('follows the target warp size (wave64)', () => {
    const { text } = scanKernel(gfx942, 256, int32, { variant: 'threeBarrier' });
    expect(text).toMatch(/int s_lane = tid & 63;/);
    expect(text).toMatch(/int s_warp = tid >> 6;/);
  });

  it('refuses targets without warps, partial warps, more warps than lanes, and floats in the oneBarrier variant', () => {
    const site = { target: host, threads: 64, tid: makeVar('tid', int32), scratch: makeVar('scratch', pointer(int32)) };
    expect(() => emitBlockExclusiveScan(new BlockBuilder(), site, 's', makeVar('v', int32))).toThrow(TileEmitError);
    expect(() => scanKernel(sm90a, 48, int32)).toThrow(/whole warps/);
    expect(() => scanKernel(sm90a, 33 * 32, int32)).toThrow(/at most 32/);
    expect(() => scanKernel(sm90a, 64, float32)).toThrow(/integers/);
    expect(() => scanKernel(sm90a, 32 * 32, int32)).not.toThrow();
  });
});
