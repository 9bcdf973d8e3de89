import fc from 'fast-check';
import { float32, int32, pointer, sm90a, SourceBuilder, type BlockBuilder, type Expr, type Target } from '@tilekit/codegen';
import { makeLdmatrixSmemLayout } from '@tilekit/gemm';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { makeGenericAttentionMask } from '../mask/genericAttentionMask.ts';
import { emitGenericAttentionMask } from '../mask/genericAttentionMaskCode.ts';
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import {
  FmhaBwdSm80SplitDPipeline,
  splitDBwdLoadOf,
  splitDBwdPdsStores,
  splitDBwdSharedPlan,
  splitDBwdSliceCount,
  splitDBwdSliceOf,
  type FmhaBwdSm80SplitDPolicy,
} from './fmhaBwdSm80SplitDPipeline.ts';
import { blockGemmPolicyErrorOf } from '../testing/blockGemmPolicyErrorOf.ts';
import { SplitDRingModel } from '../testing/splitDRingModel.ts';
import { splitDRingPrologueLoads, splitDRingStep, type SplitDRingOp } from './fmhaFwdSm80SplitDPipeline.ts';

const policy = (extra: Partial<FmhaBwdSm80SplitDPolicy> = {}): FmhaBwdSm80SplitDPolicy => ({
  dtype: 'fp16',
  headDim: 512,
  headDimV: 512,
  tileM: 64,
  tileN: 64,
  sliceWidth: 128,
  stages: 2,
  ...extra,
});

/** Arbitraries of the properties: 64-column chunks of d or d_v (up to 1024), slice widths, ring depths, dtypes. */
const chunks = fc.integer({ min: 1, max: 16 });
const sliceWidths = fc.constantFrom(64, 128);
const stageCounts = fc.constantFrom(2, 3);
const dtypes = fc.constantFrom('fp16' as const, 'bf16' as const);

/** The message of the `BlockGemmPolicyError` that constructing `p` throws. */
const policyErrorOf = (p: FmhaBwdSm80SplitDPolicy): string => blockGemmPolicyErrorOf(() => new FmhaBwdSm80SplitDPipeline(p));

/** The pipeline emitted into a bare kernel body (views over plain pointers, one query head per key head). */
function emitBody(p: FmhaBwdSm80SplitDPipeline, options: { readonly target?: Target; readonly masked?: boolean } = {}): string {
  const target = options.target ?? sm90a;
  const P = p.policy;
  const half = target.dtypeType(P.dtype);
  const src = new SourceBuilder({ dialect: target });
  const max = { max: 1 << 24 };
  const view = (ptr: Expr, rows: string, stride: string, cols: number, vector: number) =>
    makeTensorView(
      ptr,
      makeNaiveTensorDescriptor([symbol(rows, max), cols], [symbol(stride, { max: 2 ** 31 - 1, multipleOf: vector }), 1], {
        vectorLength: vector,
      }),
      { elementBytes: 2 },
    );
  src.function(
    {
      name: 'ffpa_bwd_body',
      qualifiers: target.kernelQualifiers(),
      params: {
        q: pointer(half, { const: true }),
        k: pointer(half, { const: true }),
        v: pointer(half, { const: true }),
        dout: pointer(half, { const: true }),
        lse: pointer(float32, { const: true }),
        delta: pointer(float32, { const: true }),
        dq: pointer(float32),
        dk: pointer(half),
        dv: pointer(half),
        sq: int32,
        sk: int32,
        ld: int32,
        n0: int32,
        slice: int32,
        scale: float32,
        scale_log2: float32,
      },
    },
    (b, a) => {
      const int32Zero = b.let('first_head', int32, 0);
      const int32One = b.let('head_count', int32, 1);
      const mask = emitGenericAttentionMask(
        options.masked ? { kind: 'window', alignment: 'topLeft', left: -1, right: 0 } : { kind: 'none' },
        a.sq,
        a.sk,
      );
      p.emit(b, target, {
        k: view(a.k, 'seqlen_k', 'ld', P.headDim, 8),
        v: view(a.v, 'seqlen_k', 'ld', P.headDimV, 8),
        q: () => view(a.q, 'seqlen_q', 'ld', P.headDim, 8),
        dO: () => view(a.dout, 'seqlen_q', 'ld', P.headDimV, 8),
        lseRow: () => a.lse,
        dRow: () => a.delta,
        dqRow: (bb: BlockBuilder) => bb.let('dq_row0', pointer(float32), a.dq),
        dk: view(a.dk, 'seqlen_k', 'ld', P.headDim, 2),
        dv: view(a.dv, 'seqlen_k', 'ld', P.headDimV, 2),
        seqlenQ: a.sq,
        seqlenK: a.sk,
        n0: a.n0,
        slice: a.slice,
        firstHead: int32Zero,
        headCount: int32One,
        scale: a.scale,
        scaleLog2: a.scale_log2,
        mask,
        symbols: { seqlen_q: a.sq, seqlen_k: a.sk, ld: a.ld },
      });
    },
  );
  return src.render();
}

describe('FmhaBwdSm80SplitDPipeline policy', () => {
  it('takes d, d_v multiples of 64 up to 1024, 64 × 64 tiles, slices of 64 or 128 columns, 2 or 3 stages', () => {
    for (const [headDim, headDimV] of [
      [64, 64],
      [320, 320],
      [576, 512],
      [1024, 1024],
      [128, 1024],
    ] as const)
      for (const sliceWidth of [64, 128])
        for (const stages of [2, 3]) {
          const p = new FmhaBwdSm80SplitDPipeline(policy({ headDim, headDimV, sliceWidth, stages }));
          expect(p.threads).toBe(256);
          expect(p.qkChunks).toBe(headDim / 64);
          expect(p.vChunks).toBe(headDimV / 64);
          expect(p.sliceChunks).toBe(sliceWidth / 64);
          expect(p.slices).toBe(Math.ceil(Math.max(headDim, headDimV) / sliceWidth));
          expect(p.stepsPerTile).toBe(p.qkChunks + p.vChunks + p.sliceChunks);
        }
    expect(() => new FmhaBwdSm80SplitDPipeline(policy({ dtype: 'bf16' }))).not.toThrow();
  });

  it.each([
    [{ dtype: 'fp8' as 'fp16' }, 'dtype: must be fp16 or bf16'],
    [{ headDim: 96 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDim: 1088 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDimV: 0 }, 'headDimV: must be a multiple of 64 in [64, 1024]'],
    [{ headDimV: 1.5 }, 'headDimV: must be a multiple of 64 in [64, 1024]'],
    [{ tileM: 128 }, 'tileM: must be 64 (4 warps of 16 rows along M)'],
    [{ tileN: 32 }, 'tileN: must be 64'],
    [{ sliceWidth: 192 }, 'sliceWidth: must be 64 or 128'],
    [{ sliceWidth: 256 }, 'sliceWidth: must be 64 or 128'],
    [{ stages: 1 }, 'stages: must be 2 or 3'],
    [{ stages: 4 }, 'stages: must be 2 or 3'],
  ])('%o: a BlockGemmPolicyError naming the field and rule', (extra, message) => {
    expect(policyErrorOf(policy(extra))).toContain(`FmhaBwdSm80SplitDPipeline ${message}`);
  });
});

describe('FmhaBwdSm80SplitDPipeline shared memory', () => {
  it('a ring of slots of three 8 KiB tiles, then the P and dS tiles, + 1024 of slack', () => {
    const p = new FmhaBwdSm80SplitDPipeline(policy());
    expect(p.shared).toEqual({
      tileBytes: 8192,
      bOffset: 8192,
      cOffset: 16384,
      slotBytes: 24576,
      pOffset: 49152,
      dsOffset: 57344,
      usedBytes: 65536,
      sharedBytes: 66560,
    });
    expect(new FmhaBwdSm80SplitDPipeline(policy({ stages: 3 })).sharedBytes).toBe(3 * 24576 + 2 * 8192 + 1024);
    expect(splitDBwdSharedPlan(8192, 2)).toEqual(p.shared);
  });

  it('does not grow with d, d_v or the slice width (property)', () => {
    fc.assert(
      fc.property(chunks, chunks, sliceWidths, stageCounts, dtypes, (d64, dv64, sliceWidth, stages, dtype) => {
        const p = new FmhaBwdSm80SplitDPipeline(policy({ headDim: 64 * d64, headDimV: 64 * dv64, sliceWidth, stages, dtype }));
        expect(p.sharedBytes).toBe(splitDBwdSharedPlan(8192, stages).sharedBytes);
        expect(p.sharedBytes).toBeLessThanOrEqual(3 * 24576 + 2 * 8192 + 1024);
      }),
    );
  });
});

describe('column slices', () => {
  it('cover [0, d) and [0, d_v) exactly once, in 64-column chunks, no slice empty (property)', () => {
    fc.assert(
      fc.property(chunks, chunks, sliceWidths, (d64, dv64, width) => {
        const [d, dv] = [64 * d64, 64 * dv64];
        const n = splitDBwdSliceCount(d, dv, width);
        expect(n).toBe(Math.ceil(Math.max(d, dv) / width));
        const kCover = new Array<number>(d).fill(0);
        const vCover = new Array<number>(dv).fill(0);
        for (let s = 0; s < n; s++) {
          const { k, v } = splitDBwdSliceOf(s, d, dv, width);
          expect(k[1] - k[0] + (v[1] - v[0])).toBeGreaterThan(0);
          for (const [lo, hi] of [k, v]) {
            expect(lo % 64).toBe(0);
            expect(hi % 64).toBe(0);
            expect(hi - lo).toBeLessThanOrEqual(width);
          }
          for (let c = k[0]; c < k[1]; c++) kCover[c]!++;
          for (let c = v[0]; c < v[1]; c++) vCover[c]!++;
        }
        expect(kCover.every((x) => x === 1)).toBe(true);
        expect(vCover.every((x) => x === 1)).toBe(true);
      }),
    );
  });

  it('d 576, d_v 512, width 128: five slices, the last owns dK columns 512..576 and no dV', () => {
    expect(splitDBwdSliceCount(576, 512, 128)).toBe(5);
    expect(splitDBwdSliceOf(4, 576, 512, 128)).toEqual({ k: [512, 576], v: [512, 512] });
    expect(splitDBwdSliceOf(1, 576, 512, 128)).toEqual({ k: [128, 256], v: [128, 256] });
  });
});

const MASKS: readonly AttentionMaskSpec[] = [
  { kind: 'none' },
  { kind: 'window', alignment: 'topLeft', left: -1, right: 0 },
  { kind: 'window', alignment: 'bottomRight', left: -1, right: 0 },
  { kind: 'window', alignment: 'topLeft', left: 50, right: 7 },
];

describe('the query tiles of a key tile', () => {
  it('getTileRangeAlongY visits every query tile holding a row that keeps a key of the tile, in 64-row tiles (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), fc.constantFrom(...MASKS), (sq, sk, spec) => {
        const mask = makeGenericAttentionMask(spec, sq, sk);
        for (let j0 = 0; j0 < sk; j0 += 64) {
          const [start, end] = mask.getTileRangeAlongY(j0, 64, 64);
          expect(start % 64).toBe(0);
          expect(end % 64).toBe(0);
          expect(end).toBeGreaterThanOrEqual(start);
          for (let i = 0; i < sq; i++)
            for (let j = j0; j < Math.min(j0 + 64, sk); j++)
              if (!mask.isMasked(i, j)) {
                expect(i).toBeGreaterThanOrEqual(start);
                expect(i).toBeLessThan(end);
              }
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('the ring schedule', () => {
  it('splitDBwdLoadOf: per step Q·Kᵀ chunks, dO·Vᵀ chunks, then column chunks; slot g mod stages (property)', () => {
    fc.assert(
      fc.property(chunks, chunks, fc.constantFrom(1, 2), stageCounts, fc.integer({ min: 0, max: 10_000 }), (qk, v, sc, stages, g) => {
        const l = splitDBwdLoadOf(g, qk, v, sc, stages);
        const offset = l.kind === 'qk' ? 0 : l.kind === 'dov' ? qk : qk + v;
        expect(l.tile * (qk + v + sc) + offset + l.chunk).toBe(g);
        expect(l.chunk).toBeLessThan(l.kind === 'qk' ? qk : l.kind === 'dov' ? v : sc);
        expect(l.slot).toBe(g % stages);
      }),
    );
  });

  /**
   * Runs the kernel's protocol on a model of one thread's cp.async groups and the block's
   * barriers: ring loads as in the forward, plus the P/dS tiles, written after each step's last dP
   * chunk and read by its column steps. Returns every violation: a slot or P/dS tile overwritten
   * with no barrier since its last read, a read before the data landed and a barrier published it.
   */
  function simulate(
    stages: number,
    qk: number,
    v: number,
    sc: number,
    tiles: number,
    step: readonly SplitDRingOp[] = splitDRingStep(stages),
  ) {
    const ring = new SplitDRingModel();
    let pds: { tile: number; writeEpoch: number; readEpoch: number | undefined } | undefined;
    const issue = (g: number): void => {
      const l = splitDBwdLoadOf(g, qk, v, sc, stages);
      if (l.tile >= tiles) ring.empty();
      else ring.load(g, l.slot);
    };
    for (let g = 0; g < splitDRingPrologueLoads(stages); g++) issue(g);
    for (let g = 0; g < tiles * (qk + v + sc); g++) {
      const l = splitDBwdLoadOf(g, qk, v, sc, stages);
      ring.step(step, g, l.slot, issue, () => {
        if (l.kind !== 'col') return;
        if (pds?.tile !== l.tile || pds.writeEpoch >= ring.epoch)
          ring.violations.push(`step ${g} reads P/dS before a barrier published them`);
        else pds.readEpoch = ring.epoch;
      });
      if (l.kind === 'dov' && l.chunk === v - 1) {
        if (pds !== undefined && (pds.readEpoch === undefined || pds.readEpoch >= ring.epoch))
          ring.violations.push(`tile ${l.tile} writes P/dS with no barrier since tile ${pds.tile} read them`);
        pds = { tile: l.tile, writeEpoch: ring.epoch, readEpoch: undefined };
      }
    }
    return ring.violations;
  }

  it('every load and the P/dS tiles are published before they are read and read by all before they are overwritten (property)', () => {
    fc.assert(
      fc.property(stageCounts, chunks, chunks, fc.constantFrom(1, 2), fc.integer({ min: 0, max: 5 }), (stages, qk, v, sc, tiles) => {
        expect(simulate(stages, qk, v, sc, tiles)).toEqual([]);
      }),
    );
  });

  it('the model catches broken protocols: no barrier, a wait too shallow, the issue before the barrier', () => {
    expect(
      simulate(
        2,
        2,
        2,
        2,
        2,
        splitDRingStep(2).filter((op) => op.op !== 'sync'),
      ),
    ).not.toEqual([]);
    expect(simulate(3, 2, 2, 2, 2, [{ op: 'wait', pending: 2 }, ...splitDRingStep(3).slice(1)])).not.toEqual([]);
    const [wait, sync, issue, compute] = splitDRingStep(2);
    expect(simulate(2, 1, 1, 1, 2, [wait!, issue!, sync!, compute!])).not.toEqual([]);
  });
});

describe('P/dS pair stores', () => {
  it('each thread writes 8 pairs of adjacent keys at (base ^ xor) + add (checked against the layout for every thread)', () => {
    const p = new FmhaBwdSm80SplitDPipeline(policy());
    expect(p.pdsStores).toHaveLength(8);
    expect(p.pdsStores.slice(0, 4)).toEqual([
      { d: 0, row: 0, xor: 0, add: 0 },
      { d: 2, row: 1, xor: 0, add: 1024 },
      { d: 4, row: 0, xor: 16, add: 0 },
      { d: 6, row: 1, xor: 16, add: 1024 },
    ]);
    // The second pair of n8 tiles is 32 keys on (the other warp along N holds the 16 between): chunk 4.
    expect(p.pdsStores[4]).toEqual({ d: 8, row: 0, xor: 64, add: 0 });
  });

  it('a layout that breaks the formula is refused', () => {
    const p = new FmhaBwdSm80SplitDPipeline(policy());
    const kMajor = makeLdmatrixSmemLayout({ dtype: 'fp16', mn: 64, k: 64, major: 'K' });
    expect(() => splitDBwdPdsStores(p.qk.cEncoding, kMajor, 256)).toThrow(/P\/dS stores: each accumulator pair/);
  });
});

describe('FmhaBwdSm80SplitDPipeline emission', () => {
  /**
   * The main loop's shared-memory and group events in emitted order, one letter each: W wait_group,
   * S __syncthreads, C cp.async (a run), G commit_group, R ldmatrix (a run), P a P/dS pair store
   * (a run), A red.global.add.f32 (a run).
   */
  function loopEvents(text: string): string {
    const loop = text.slice(text.indexOf('for (int it = 0; it < steps_total; ++it)'), text.lastIndexOf('tk_cp_async_wait_group<0>();'));
    const re = new RegExp(
      [
        'tk_cp_async_wait_group<',
        '__syncthreads\\(\\)',
        'tk_cp_async_cg_16\\(',
        'tk_cp_async_commit_group\\(\\)',
        'tk_ldmatrix_x4',
        'reinterpret_cast<unsigned int\\*>',
        'tk_red_add_f32',
      ].join('|'),
      'g',
    );
    const letter: Record<string, string> = {
      'tk_cp_async_wait_group<': 'W',
      '__syncthreads()': 'S',
      'tk_cp_async_cg_16(': 'C',
      'tk_cp_async_commit_group()': 'G',
      tk_ldmatrix_x4: 'R',
      'reinterpret_cast<unsigned int*>': 'P',
      tk_red_add_f32: 'A',
    };
    return [...loop.matchAll(re)]
      .map((m) => letter[m[0]] ?? '?')
      .join('')
      .replace(/C+/g, 'C')
      .replace(/R+/g, 'R')
      .replace(/P+/g, 'P')
      .replace(/A+/g, 'A');
  }

  it.each([2, 3])(
    'stages %i: every step waits, syncs, issues + commits, then reads; P/dS stores sit between the dP steps and the column steps',
    (stages) => {
      const p = new FmhaBwdSm80SplitDPipeline(policy({ headDim: 128, headDimV: 128, sliceWidth: 128, stages }));
      const text = emitBody(p, { masked: true });
      const step = 'WSCGR';
      // Q·Kᵀ loop body, dO·Vᵀ loop body, P and dS stores, 2 column steps (dV; dK, then dQ and its red.global adds).
      const column = 'WSCGRRA'.replace('RR', 'R');
      expect(loopEvents(text)).toBe(step + step + 'P' + column + column);
      expect(text).toContain(`tk_cp_async_wait_group<${stages - 2}>();`);
    },
  );

  it('emits runtime loops over the Q·Kᵀ and dO·Vᵀ chunks, unrolled column steps, atomic dQ adds and no static shared memory', () => {
    const p = new FmhaBwdSm80SplitDPipeline(policy({ headDim: 576, headDimV: 512, sliceWidth: 128 }));
    const text = emitBody(p, { masked: true });
    expect(text).toMatch(/#pragma unroll 1\n\s*for \(int c = 0; c < 9; \+\+c\) \{/);
    expect(text).toMatch(/#pragma unroll 1\n\s*for \(int cv = 0; cv < 8; \+\+cv\) \{/);
    expect(text).toContain('float dk_acc0[16];');
    expect(text).toContain('float dv_acc1[16];');
    expect(text).not.toContain('dk_acc2');
    expect(text).toContain('tk_red_add_f32(');
    expect(text).not.toContain('__shared__ unsigned char');
    expect(text).toContain('if (col_chunk1 < 9)');
    expect(text).toContain('if (col_chunk1 < 8)');
  });
});
