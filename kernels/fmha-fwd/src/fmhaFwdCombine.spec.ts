import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFmhaFwdProblem } from '@tilekit/fmha';
import { combineSplitPartials, FMHA_FWD_COMBINE_CATALOG, fmhaFwdCombineEncoding, findFmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { fmhaFwdCombineUnsupported, prepareFmhaFwdCombineLaunch } from './fmhaFwdCombineLauncher.ts';
import { selectFmhaFwdCombineInstance } from './fmhaFwdDispatch.ts';
import { fmhaFwdWorkspace } from '@tilekit/fmha-launch';

/** Softmax over `keys` of scores `s` with values `v` (rows of hdimV): LSE and O, float64. */
function softmax(
  s: readonly number[],
  v: readonly (readonly number[])[],
  keys: readonly number[],
  hdimV: number,
): { lse: number; o: number[] } {
  if (keys.length === 0) return { lse: -Infinity, o: new Array<number>(hdimV).fill(0) };
  const m = Math.max(...keys.map((j) => s[j]!));
  const p = keys.map((j) => Math.exp(s[j]! - m));
  const sum = p.reduce((a, b) => a + b, 0);
  const o = Array.from({ length: hdimV }, (_, d) => keys.reduce((acc, j, i) => acc + p[i]! * v[j]![d]!, 0) / sum);
  return { lse: m + Math.log(sum), o };
}

describe('fmhaFwdCombineEncoding', () => {
  it('covers the tileM × headDimV tile exactly once, each access a 16-byte vector of consecutive columns', () => {
    for (const headDimV of [32, 64, 96, 128, 256]) {
      const enc = fmhaFwdCombineEncoding({ dtype: 'fp16', headDimV, tileM: 16, threads: 128 });
      expect(enc.xLengths).toEqual([16, headDimV]);
      const seen = new Set<string>();
      for (let t = 0; t < enc.numThreads; t++) {
        const ps = enc.partitionIndexOf(t);
        for (let d = 0; d < enc.threadBufferSize; d++) {
          const [r, c] = enc.calculateXIndexFromD(ps, d);
          const key = `${r},${c}`;
          expect(seen.has(key), key).toBe(false);
          seen.add(key);
          // The last Y (K1 = 4) runs along the columns: elements d..d+3 of an aligned group are consecutive.
          if (d % 4 !== 0) expect(enc.calculateXIndexFromD(ps, d - 1)).toEqual([r, c! - 1]);
        }
      }
      expect(seen.size).toBe(16 * headDimV);
    }
  });

  it('rejects shapes it cannot cover, naming the policy field', () => {
    expect(() => fmhaFwdCombineEncoding({ dtype: 'fp16', headDimV: 130, tileM: 16, threads: 128 })).toThrow(/policy\.headDimV/);
    expect(() => fmhaFwdCombineEncoding({ dtype: 'fp16', headDimV: 32, tileM: 8, threads: 128 })).toThrow(/policy\.tileM.*multiple of 16/);
    expect(() => fmhaFwdCombineEncoding({ dtype: 'fp16', headDimV: 128, tileM: 16, threads: 100 })).toThrow(/policy\.threads/);
  });
});

describe('combineSplitPartials', () => {
  it('combining the softmax of disjoint key subsets gives the softmax over their union (empty subsets, all empty)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (n, splits, hdimV, seed) => {
          let x = seed || 1;
          const rnd = (): number => {
            x = (x * 1103515245 + 12345) % 2 ** 31;
            return (x / 2 ** 31) * 8 - 4;
          };
          const s = Array.from({ length: n }, rnd);
          const v = Array.from({ length: n }, () => Array.from({ length: hdimV }, rnd));
          const owner = Array.from({ length: n }, () => Math.floor(((rnd() + 4) / 8) * splits) % splits);
          const parts = Array.from({ length: splits }, (_, k) =>
            softmax(
              s,
              v,
              owner.flatMap((o, j) => (o === k ? [j] : [])),
              hdimV,
            ),
          );
          const whole = softmax(
            s,
            v,
            s.map((_, j) => j),
            hdimV,
          );
          const got = combineSplitPartials(parts, hdimV);
          if (n === 0) {
            expect(got.lse).toBe(-Infinity);
            expect([...got.o]).toEqual(new Array<number>(hdimV).fill(0));
            return;
          }
          expect(got.lse).toBeCloseTo(whole.lse, 10);
          got.o.forEach((o, d) => expect(o).toBeCloseTo(whole.o[d]!, 10));
        },
      ),
    );
  });
});

describe('combine catalog, dispatch and launch', () => {
  it('one instance per (dtype, hdimV), unique names and hashes', () => {
    expect(FMHA_FWD_COMBINE_CATALOG.length).toBe(10);
    expect(new Set(FMHA_FWD_COMBINE_CATALOG.map((i) => i.name)).size).toBe(10);
    expect(new Set(FMHA_FWD_COMBINE_CATALOG.map((i) => i.key.hash)).size).toBe(10);
    expect(findFmhaFwdCombineInstance('bf16', 128)?.name).toBe('fmha_fwd_combine_sm90_bf16_dv128_m16_t128');
    expect(FMHA_FWD_COMBINE_CATALOG.every((i) => i.staticSharedBytes === 128 * 16 * 4)).toBe(true);
  });

  it('dispatches by dtype and hdimV; an odd o row stride is rejected with the reason', () => {
    const p = checkFmhaFwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 4, hdimQ: 192, seqlenQ: 3, seqlenK: 4097, splitKv: 8 });
    expect(selectFmhaFwdCombineInstance(p).name).toBe('fmha_fwd_combine_sm90_fp16_dv128_m16_t128');
    const odd = checkFmhaFwdProblem({
      dtype: 'fp16',
      batch: 1,
      nheadQ: 1,
      hdimQ: 64,
      seqlenQ: 3,
      splitKv: 2,
      outputLayout: 'bshd',
      oStrides: { batch: 1000, head: 64, row: 65 },
    });
    expect(fmhaFwdCombineUnsupported(findFmhaFwdCombineInstance('fp16', 64)!, odd)).toEqual([
      'o row stride 65 is odd (the combine stores element pairs)',
    ]);
    expect(() => selectFmhaFwdCombineInstance(odd)).toThrow(/no fmha-fwd instance runs .*row stride 65 is odd/s);
  });

  it('packs the workspace layout and checks every buffer before launch', () => {
    const p = checkFmhaFwdProblem({ dtype: 'bf16', batch: 2, nheadQ: 3, hdimQ: 64, seqlenQ: 17, seqlenK: 999, splitKv: 5, lse: true });
    const inst = findFmhaFwdCombineInstance('bf16', 64)!;
    const ws = fmhaFwdWorkspace(p);
    const buf = (ptr: bigint, bytes: number) => ({ ptr, bytes });
    const ok = {
      oAcc: buf(0x10000n, ws.oElements * 4),
      lseAcc: buf(0x900000n, ws.lseElements * 4),
      o: buf(0xa00000n, 2 * 3 * 17 * 64 * 2),
      lse: buf(0xb00000n, 2 * 3 * 17 * 4),
    };
    const { launch } = prepareFmhaFwdCombineLaunch(inst, p, ok);
    expect(launch).toEqual({ grid: [2, 3, 2], block: [128, 1, 1], sharedBytes: 0 });
    expect(() => prepareFmhaFwdCombineLaunch(inst, p, { ...ok, oAcc: buf(0x10000n, ws.oElements * 4 - 4) })).toThrow(/oAcc/);
    expect(() => prepareFmhaFwdCombineLaunch(inst, p, { ...ok, oAcc: buf(0x10008n, ws.oElements * 4) })).toThrow(/oAcc.*16 bytes/);
    expect(() => prepareFmhaFwdCombineLaunch(inst, p, { ...ok, lse: undefined as never })).toThrow(/lse/);
    expect(() => prepareFmhaFwdCombineLaunch(inst, p, { ...ok, o: buf(0xa00000n, 100) })).toThrow(/^.*o.*at least/);
    expect(() => prepareFmhaFwdCombineLaunch(findFmhaFwdCombineInstance('fp16', 64)!, p, ok)).toThrow(
      /dtype bf16: this combine writes fp16/,
    );
    const g = checkFmhaFwdProblem({
      dtype: 'bf16',
      batch: 2,
      nheadQ: 3,
      hdimQ: 64,
      seqstartQ: [0, 5, 9],
      seqstartK: [0, 100, 300],
      splitKv: 3,
    });
    expect(() => prepareFmhaFwdCombineLaunch(inst, g, { ...ok })).toThrow(/seqstartQ/);
  });
});
