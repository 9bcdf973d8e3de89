// prepareFfpaLaunch with fake slice kernels (no GPU): slices that do not cover [0, hdimV) in order are
// rejected ('kernels'), Q/K/V/O are checked whole before any slice is prepared ('o' too small or
// misaligned; O/LSE overlapping V or each other anywhere in the whole tensors), and each slice's
// kernel is prepared with its own launch problem (hdimV = the slice's
// width, LSE from the first slice only) and V and O advanced to its first column; `launch` enqueues
// the slices in column order, and only then.
import type { CheckedFmhaFwdProblem, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { fmhaFwdOperandElements } from '@tilekit/fmha';
import type { FmhaFwdBuffers, FmhaFwdKernel, TensorMapEncoder } from '@tilekit/fmha-launch';
import { ArgumentError } from '@tilekit/numeric';
import type { DeviceRange, Stream } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { ffpaColumnSlices, type FfpaColumnSlice } from './ffpaColumnSlices.ts';
import { prepareFfpaLaunch, type FfpaSliceKernel } from './ffpaLauncher.ts';

/** What the fake kernels saw: each prepare call, and each launch (by kernel id) in order. */
interface Log {
  readonly prepares: { id: string; p: FmhaFwdLaunchProblem; buffers: FmhaFwdBuffers; encode: TensorMapEncoder }[];
  readonly launches: string[];
}

/** A slice kernel whose `prepare` records its call and returns a launch that records itself. */
function fakeKernel(id: string, log: Log): FmhaFwdKernel {
  return {
    prepare: (p: FmhaFwdLaunchProblem, buffers: FmhaFwdBuffers, encode: TensorMapEncoder) => {
      log.prepares.push({ id, p, buffers, encode });
      return { launch: () => log.launches.push(id) };
    },
  } as unknown as FmhaFwdKernel;
}

function newLog(): Log {
  return { prepares: [], launches: [] };
}

/** One fake kernel per slice, `k0`, `k1`, … */
function kernelsFor(slices: readonly FfpaColumnSlice[], log: Log): FfpaSliceKernel[] {
  return slices.map((slice, i) => ({ slice, kernel: fakeKernel(`k${i}`, log) }));
}

function problem(over: Partial<FfpaProblem> = {}): CheckedFmhaFwdProblem {
  return checkFfpaProblem({ dtype: 'fp16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 1024, seqlenQ: 33, seqlenK: 70, lse: true, ...over });
}

/** Buffers of exactly the problem's extents at distinct 256 MiB-aligned fake addresses (never dereferenced). */
function buffersFor(p: CheckedFmhaFwdProblem): FmhaFwdBuffers & { lse: DeviceRange } {
  const el = fmhaFwdOperandElements(p);
  const at = (i: number, bytes: number): DeviceRange => ({ ptr: BigInt(0x1000_0000 * (i + 1)), bytes });
  const group =
    p.mode === 'group' ? { seqstartQ: at(5, 4 * (p.batch + 1)), seqstartK: at(6, 4 * (p.batch + 1)), seqlenK: at(7, 4 * p.batch) } : {};
  return { q: at(0, 2 * el.q), k: at(1, 2 * el.k), v: at(2, 2 * el.v), o: at(3, 2 * el.o), lse: at(4, 4 * el.lse), ...group };
}

const encode: TensorMapEncoder = () => {
  throw new Error('the fake kernels encode nothing');
};

/** The ArgumentError `run` throws. */
function argumentError(run: () => unknown): ArgumentError {
  try {
    run();
  } catch (e) {
    if (e instanceof ArgumentError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('prepareFfpaLaunch: the slices must cover [0, hdimV) in order', () => {
  const bad: Record<string, readonly FfpaColumnSlice[]> = {
    none: [],
    'only the first': [{ offset: 0, width: 512 }],
    'a gap': [
      { offset: 0, width: 512 },
      { offset: 576, width: 448 },
    ],
    'out of order': [
      { offset: 512, width: 512 },
      { offset: 0, width: 512 },
    ],
    overlapping: [
      { offset: 0, width: 512 },
      { offset: 448, width: 576 },
    ],
    'past hdimV': [
      { offset: 0, width: 512 },
      { offset: 512, width: 512 },
      { offset: 1024, width: 64 },
    ],
    'not from 0': [
      { offset: 64, width: 512 },
      { offset: 576, width: 448 },
    ],
  };
  for (const [what, slices] of Object.entries(bad))
    it(`${what} → ArgumentError 'kernels', nothing prepared`, () => {
      const p = problem();
      const log = newLog();
      const e = argumentError(() => prepareFfpaLaunch(kernelsFor(slices, log), p, buffersFor(p), encode));
      expect(e.argument).toBe('kernels');
      expect(e.message).toMatch(/^kernels: must cover the columns \[0, 1024\) of O in order/);
      expect(log.prepares).toEqual([]);
    });
});

describe('prepareFfpaLaunch: the whole tensors are checked before any slice', () => {
  const p = problem();
  const oBytes = 2 * fmhaFwdOperandElements(p).o;

  it("O one byte short of the whole problem → ArgumentError 'o', no kernel prepared", () => {
    const log = newLog();
    const b = buffersFor(p);
    // Enough for the first slice's columns of every row, not for the last row's second slice.
    const e = argumentError(() =>
      prepareFfpaLaunch(kernelsFor(ffpaColumnSlices(1024), log), p, { ...b, o: { ...b.o, bytes: oBytes - 1 } }, encode),
    );
    expect(e.argument).toBe('o');
    expect(e.problems.map((x) => x.argument)).toEqual(['o']);
    expect(e.message).toMatch(new RegExp(`^o: must hold at least ${oBytes} bytes`));
    expect(log.prepares).toEqual([]);
  });

  it("O not aligned to element pairs → 'o'; Q too small and O too small → both named; nothing prepared", () => {
    const log = newLog();
    const b = buffersFor(p);
    const kernels = kernelsFor(ffpaColumnSlices(1024), log);
    expect(argumentError(() => prepareFfpaLaunch(kernels, p, { ...b, o: { ptr: b.o.ptr + 2n, bytes: oBytes } }, encode)).argument).toBe(
      'o',
    );
    const both = argumentError(() =>
      prepareFfpaLaunch(kernels, p, { ...b, q: { ...b.q, bytes: b.q.bytes - 2 }, o: { ...b.o, bytes: 0 } }, encode),
    );
    expect(both.problems.map((x) => x.argument)).toEqual(['q', 'o']);
    expect(log.prepares).toEqual([]);
  });

  it("O whose last row's second slice overlaps V, or LSE over O's end → named, though no single slice's columns overlap", () => {
    const log = newLog();
    const b = buffersFor(p);
    const kernels = kernelsFor(ffpaColumnSlices(1024), log);
    // O ends 1024 bytes into V: only the last row's columns [512, 1024) (slice 1's) reach V.
    const oOverV = { ptr: b.v.ptr - BigInt(oBytes - 1024), bytes: oBytes };
    expect(argumentError(() => prepareFfpaLaunch(kernels, p, { ...b, o: oOverV }, encode)).message).toMatch(/o: must not overlap v/);
    const lseOverO = { ptr: b.o.ptr + BigInt(oBytes - 1024), bytes: b.lse.bytes };
    expect(argumentError(() => prepareFfpaLaunch(kernels, p, { ...b, lse: lseOverO }, encode)).message).toMatch(/lse: must not overlap o/);
    expect(log.prepares).toEqual([]);
  });

  it('O of exactly the whole extent is enough', () => {
    const log = newLog();
    prepareFfpaLaunch(kernelsFor(ffpaColumnSlices(1024), log), p, buffersFor(p), encode);
    expect(log.prepares).toHaveLength(2);
  });
});

describe('prepareFfpaLaunch: each slice prepared on its columns, launched in column order', () => {
  const cases: readonly [string, Partial<FfpaProblem>][] = [
    ['fp16 d1024 (2 × 512), LSE', {}],
    ['bf16 d576 (320 + 256), bshd, LSE', { dtype: 'bf16', hdimQ: 576, inputLayout: 'bshd', outputLayout: 'bshd' }],
    ['fp16 d704 (384 + 320), no LSE', { hdimQ: 704, lse: false }],
    [
      'bf16 d576/512 (one slice), group mode',
      {
        dtype: 'bf16',
        hdimQ: 576,
        hdimV: 512,
        batch: 3,
        seqlenQ: undefined,
        seqstartQ: [0, 5, 5, 40],
        seqstartK: [0, 9, 20, 21],
        seqlenK: [4, 11, 1],
      } as unknown as Partial<FfpaProblem>,
    ],
  ];
  for (const [label, over] of cases)
    it(label, () => {
      const p = problem(over);
      expect(p.mode).toBe('seqstartQ' in over ? 'group' : 'batch');
      const slices = ffpaColumnSlices(p.hdimV);
      const log = newLog();
      const stream = { id: 'fake stream' } as unknown as Stream;
      const b = { ...buffersFor(p), stream };
      const prepared = prepareFfpaLaunch(kernelsFor(slices, log), p, b, encode);
      expect(log.prepares.map((x) => x.id)).toEqual(slices.map((_, i) => `k${i}`));
      expect(log.launches).toEqual([]);
      for (const [i, s] of slices.entries()) {
        const { p: sp, buffers: sb, encode: se } = log.prepares[i]!;
        expect(se).toBe(encode);
        // The slice's problem: the whole one with hdimV = its width and LSE from the first slice only.
        expect(sp.hdimV).toBe(s.width);
        expect(sp.lse).toBe(p.lse && i === 0);
        expect({ ...sp, hdimV: p.hdimV, lse: p.lse }).toEqual(p);
        // V and O start at the slice's first column (2-byte elements), the rest of each buffer after it.
        const skip = 2 * s.offset;
        expect(sb.v).toEqual({ ptr: b.v.ptr + BigInt(skip), bytes: b.v.bytes - skip });
        expect(sb.o).toEqual({ ptr: b.o.ptr + BigInt(skip), bytes: b.o.bytes - skip });
        expect(sb.q).toBe(b.q);
        expect(sb.k).toBe(b.k);
        expect(sb.stream).toBe(stream);
        if (p.lse && i === 0) expect(sb.lse).toBe(b.lse);
        else expect(sb.lse).toBeUndefined();
        for (const a of ['seqstartQ', 'seqstartK', 'seqlenK'] as const) expect(sb[a]).toBe(b[a]);
      }
      prepared.launch();
      expect(log.launches).toEqual(slices.map((_, i) => `k${i}`));
      prepared.launch();
      expect(log.launches).toHaveLength(2 * slices.length);
      expect(log.prepares).toHaveLength(slices.length);
    });

  it('launches follow the order of the slices given (one slice kernel reused for both 512-column slices)', () => {
    const p = problem();
    const log = newLog();
    const shared = fakeKernel('k512', log);
    const kernels = ffpaColumnSlices(1024).map((slice) => ({ slice, kernel: shared }));
    prepareFfpaLaunch(kernels, p, buffersFor(p), encode).launch();
    expect(log.prepares.map((x) => x.buffers.o.ptr - buffersFor(p).o.ptr)).toEqual([0n, 1024n]);
    expect(log.launches).toEqual(['k512', 'k512']);
  });
});
