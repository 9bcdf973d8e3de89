import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { planSpargePoolLaunches, spargePoolInstancesFor, type SpargePoolBuffers } from './spargePoolKernels.ts';
import {
  checkSpargePoolProblem,
  spargeKeyMeanChunkRows,
  type CheckedSpargePoolProblem,
  spargePackedStrides,
  spargePoolOutputBytes,
  spargeTensorSpan,
  type SpargePoolProblem,
} from './spargePoolProblem.ts';
import { spargePoolTile } from './spargePoolTile.ts';

const common = { dtype: 'fp16', headDim: 128, batch: 2, nhead: 4, nheadK: 2, blockQ: 128, blockK: 64, int8: true } as const;
const base: SpargePoolProblem = { ...common, seqlenQ: 259, seqlenK: 1000 };

let next = 0x10000n;
const range = (bytes: number) => {
  const r = { ptr: next, bytes: Math.max(16, bytes) };
  next += BigInt(Math.ceil(r.bytes / 256) * 256 + 256);
  return r;
};

function buffersFor(problem: SpargePoolProblem | CheckedSpargePoolProblem): SpargePoolBuffers {
  const p = checkSpargePoolProblem(problem);
  const s = spargePoolOutputBytes(p);
  return {
    q: range(spargeTensorSpan(p.qStrides, p.batches, p.nhead, p.rowsQ, p.headDim) * 2),
    k: range(spargeTensorSpan(p.kStrides, p.batches, p.nheadK, p.rowsK, p.headDim) * 2),
    ...(p.mode === 'group' ? { seqstartQ: range(4 * (p.batch + 1)), seqstartK: range(4 * (p.batch + 1)) } : {}),
    pooledQ: range(s.pooledQ),
    simQ: range(s.simQ),
    pooledK: range(s.pooledK),
    simK: range(s.simK),
    km: range(s.km),
    kmPartial: range(s.kmPartial),
    q8: range(s.q8),
    k8: range(s.k8),
    qScale: range(s.qScale),
    kScale: range(s.kScale),
  };
}

describe('spargePoolTile', () => {
  it('covers rows × cols exactly once over the threads', () => {
    for (const rows of [64, 128]) {
      for (const cols of [64, 128]) {
        const t = spargePoolTile({ rows, cols, vectorLength: 8, threads: 256 });
        const seen = new Map<string, number>();
        for (let th = 0; th < 256; th++) {
          const ps = t.encoding.partitionIndexOf(th);
          for (let d = 0; d < t.encoding.threadBufferSize; d++) {
            const key = t.encoding.calculateXIndexFromD(ps, d).join(',');
            seen.set(key, (seen.get(key) ?? 0) + 1);
          }
        }
        expect(seen.size).toBe(rows * cols);
        expect([...seen.values()].every((n) => n === 1)).toBe(true);
      }
    }
  });
});

describe('checkSpargePoolProblem', () => {
  it('K-mean chunks cover the longest sequence with at most 64 chunks of ≥ 256 rows (multiples of 64)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 22 }), (s) => {
        const r = spargeKeyMeanChunkRows(s);
        expect(r % 64).toBe(0);
        expect(r).toBeGreaterThanOrEqual(256);
        expect(Math.ceil(s / r)).toBeLessThanOrEqual(64);
      }),
    );
  });

  it('names the broken argument', () => {
    const bad: [Partial<SpargePoolProblem> & Record<string, unknown>, string][] = [
      [{ dtype: 'fp32' as 'fp16' }, 'problem.dtype'],
      [{ headDim: 96 }, 'problem.headDim'],
      [{ blockQ: 32 }, 'problem.blockQ'],
      [{ nheadK: 3 }, 'problem.nheadK'],
      [{ seqlenK: 0 }, 'problem.seqlenK'],
      [{ qStrides: { row: 132, head: 0, batch: 0 } }, 'problem.qStrides.row'],
      [{ kStrides: { row: 128, head: 4, batch: 0 } }, 'problem.kStrides.head'],
      [{ smoothK: 1 as unknown as boolean }, 'problem.smoothK'],
      [{ tailBlockRule: 'nan' as 'pooled' }, 'problem.tailBlockRule'],
    ];
    for (const [patch, name] of bad) {
      let err: unknown;
      try {
        checkSpargePoolProblem({ ...base, ...patch } as SpargePoolProblem);
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(SpargeArgumentError);
      expect((err as SpargeArgumentError).message).toContain(name);
    }
    expect(() => checkSpargePoolProblem({ ...common, seqstartQ: [0, 5, 3], seqstartK: [0, 1, 2] })).toThrow(/seqstartQ\[2\]/);
  });

  it('sizes every output from the padded block counts', () => {
    const s = spargePoolOutputBytes(base);
    expect(s.pooledQ).toBe(2 * 4 * 3 * 128 * 4);
    expect(s.simK).toBe(2 * 2 * 16 * 4);
    expect(s.q8).toBe(2 * 4 * 259 * 128);
    expect(s.kScale).toBe(2 * 2 * 16 * 4);
    expect(spargePoolOutputBytes({ ...base, int8: false }).k8).toBe(0);
  });
});

describe('planSpargePoolLaunches', () => {
  it('launches K mean, finalize, K pooling, Q pooling with grids covering the blocks', () => {
    const p = checkSpargePoolProblem({
      ...common,
      seqstartQ: [0, 17, 1017],
      seqstartK: [0, 1000, 1001],
      kStrides: spargePackedStrides('bshd', 2, 1001, 128),
    });
    const l = planSpargePoolLaunches(p, buffersFor(p), spargePoolInstancesFor(p));
    expect(l.map((x) => x.instance.key.family)).toEqual([
      'sparge_key_mean_partial',
      'sparge_key_mean_finalize',
      'sparge_pool',
      'sparge_pool',
    ]);
    expect(l[0]!.launch.grid).toEqual([p.kmChunksMax, 2, 2]);
    expect(l[2]!.launch.grid).toEqual([Math.ceil(1000 / 64), 2, 2]);
    expect(l[3]!.launch.grid).toEqual([Math.ceil(1000 / 128), 4, 2]);
  });

  it('skips the K-mean partial pass without smoothK', () => {
    const p = checkSpargePoolProblem({ ...base, smoothK: false });
    const { kmPartial: _, ...bufs } = buffersFor(p);
    expect(planSpargePoolLaunches(p, bufs, spargePoolInstancesFor(p)).map((x) => x.instance.key.family)).toEqual([
      'sparge_key_mean_finalize',
      'sparge_pool',
      'sparge_pool',
    ]);
  });

  it('names a missing, small or misaligned buffer', () => {
    const p = checkSpargePoolProblem(base);
    const set = spargePoolInstancesFor(p);
    const good = buffersFor(p);
    for (const name of ['q', 'k', 'pooledQ', 'simQ', 'pooledK', 'simK', 'km', 'kmPartial', 'q8', 'k8', 'qScale', 'kScale'] as const) {
      const small = { ...good, [name]: { ptr: good[name]!.ptr, bytes: 1 } };
      expect(() => planSpargePoolLaunches(p, small, set), name).toThrow(new RegExp(`^${name}`));
      const { [name]: _, ...missing } = good;
      expect(() => planSpargePoolLaunches(p, missing as SpargePoolBuffers, set), name).toThrow(new RegExp(`^${name}`));
    }
    expect(() => planSpargePoolLaunches(p, { ...good, q: { ptr: good.q.ptr + 2n, bytes: good.q.bytes } }, set)).toThrow(/aligned/);
    const g = checkSpargePoolProblem({ ...common, seqstartQ: [0, 1, 2], seqstartK: [0, 1, 2] });
    expect(() => planSpargePoolLaunches(g, buffersFor(base), spargePoolInstancesFor(g))).toThrow(/^seqstartQ/);
  });
});
