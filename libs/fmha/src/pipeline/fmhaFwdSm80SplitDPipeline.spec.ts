import fc from 'fast-check';
import { sm90a } from '@tilekit/codegen';
import { describe, expect, it } from 'vitest';
import { blockGemmPolicyErrorOf } from '../testing/blockGemmPolicyErrorOf.ts';
import { emitFmhaFwdSm80TestBody } from '../testing/fmhaFwdSm80TestBody.ts';
import { SplitDRingModel } from '../testing/splitDRingModel.ts';
import {
  FmhaFwdSm80SplitDPipeline,
  splitDChunkAccumulatorOffset,
  splitDLoadOf,
  splitDRingPrologueLoads,
  splitDRingStep,
  splitDSharedPlan,
  type FmhaFwdSm80SplitDPolicy,
} from './fmhaFwdSm80SplitDPipeline.ts';

const policy = (extra: Partial<FmhaFwdSm80SplitDPolicy> = {}): FmhaFwdSm80SplitDPolicy => ({
  dtype: 'fp16',
  headDim: 512,
  headDimV: 256,
  tileM: 64,
  tileN: 64,
  qkChunk: 64,
  stages: 3,
  pvAccumulation: 'f32',
  ...extra,
});

/** The message of the `BlockGemmPolicyError` that constructing `p` throws. */
const policyErrorOf = (p: FmhaFwdSm80SplitDPolicy): string => blockGemmPolicyErrorOf(() => new FmhaFwdSm80SplitDPipeline(p));

describe('FmhaFwdSm80SplitDPipeline policy', () => {
  it('takes d multiples of 64 up to 1024, d_v up to 256, 64 × 64 tiles, Q/K chunks of 16 or 64, 1–4 stages, f32 or f16 P·V', () => {
    for (const headDim of [64, 320, 576, 1024])
      for (const headDimV of [64, 128, 192, 256])
        for (const qkChunk of [16, 64])
          for (const stages of [1, 2, 3, 4]) {
            const p = new FmhaFwdSm80SplitDPipeline(policy({ headDim, headDimV, qkChunk, stages }));
            expect(p.threads).toBe(128);
            expect(p.qkChunks).toBe(headDim / qkChunk);
            expect(p.vChunks).toBe(headDimV / 64);
          }
    expect(() => new FmhaFwdSm80SplitDPipeline(policy({ pvAccumulation: 'f16' }))).not.toThrow();
  });

  it.each([
    [{ dtype: 'fp8' as 'fp16' }, 'dtype: must be fp16 or bf16'],
    [{ headDim: 96 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDim: 1088 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDim: 0 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDimV: 320 }, 'headDimV: must be a multiple of 64 in [64, 256]'],
    [{ headDimV: 32 }, 'headDimV: must be a multiple of 64 in [64, 256]'],
    [{ tileM: 128 }, 'tileM: must be 64 (4 warps of 16 query rows)'],
    [{ tileN: 128 }, 'tileN: must be 64'],
    [{ qkChunk: 32 }, 'qkChunk: must be 16 or 64'],
    [{ stages: 0 }, 'stages: must be an integer in [1, 4]'],
    [{ stages: 5 }, 'stages: must be an integer in [1, 4]'],
    [{ stages: 2.5 }, 'stages: must be an integer in [1, 4]'],
    [{ pvAccumulation: 'f64' as 'f32' }, 'pvAccumulation: must be "f32" or "f16"'],
    [{ dtype: 'bf16' as const, pvAccumulation: 'f16' as const }, 'pvAccumulation: "f16" needs fp16 inputs'],
  ])('%o: a BlockGemmPolicyError naming the field and rule', (extra, message) => {
    const m = policyErrorOf(policy(extra));
    expect(m).toContain(`FmhaFwdSm80SplitDPipeline ${message}`);
  });
});

describe('FmhaFwdSm80SplitDPipeline shared memory', () => {
  it('a ring of `stages` slots of max(Q chunk + K chunk, V chunk) bytes, + 1024 of slack; the K chunk right after the Q chunk', () => {
    const p64 = new FmhaFwdSm80SplitDPipeline(policy({ qkChunk: 64, stages: 3 }));
    expect(p64.shared).toEqual({
      qChunkBytes: 8192,
      kChunkBytes: 8192,
      vChunkBytes: 8192,
      kOffset: 8192,
      slotBytes: 16384,
      usedBytes: 49152,
      sharedBytes: 50176,
    });
    expect(p64.sharedBytes).toBe(50176);
    const p16 = new FmhaFwdSm80SplitDPipeline(policy({ qkChunk: 16, stages: 4 }));
    expect(p16.shared).toMatchObject({ qChunkBytes: 2048, kChunkBytes: 2048, vChunkBytes: 8192, kOffset: 2048, slotBytes: 8192 });
    expect(p16.sharedBytes).toBe(4 * 8192 + 1024);
    expect(splitDSharedPlan(2048, 2048, 8192, 1).sharedBytes).toBe(8192 + 1024);
  });

  it('does not grow with d or d_v (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(16, 64),
        fc.integer({ min: 1, max: 4 }),
        (d64, dv64, qkChunk, stages) => {
          const p = new FmhaFwdSm80SplitDPipeline(policy({ headDim: 64 * d64, headDimV: 64 * dv64, qkChunk, stages }));
          const base = new FmhaFwdSm80SplitDPipeline(policy({ headDim: 64, headDimV: 64, qkChunk, stages }));
          expect(p.sharedBytes).toBe(base.sharedBytes);
          expect(p.sharedBytes).toBeLessThanOrEqual(4 * 16384 + 1024);
        },
      ),
    );
  });
});

describe('the ring schedule', () => {
  it('splitDLoadOf: loads in consumption order (each tile: Q·Kᵀ chunks, then V chunks), slot g mod stages (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 10_000 }),
        (qk, v, stages, g) => {
          const l = splitDLoadOf(g, qk, v, stages);
          expect(l.tile * (qk + v) + (l.kind === 'qk' ? l.chunk : qk + l.chunk)).toBe(g);
          expect(l.chunk).toBeGreaterThanOrEqual(0);
          expect(l.chunk).toBeLessThan(l.kind === 'qk' ? qk : v);
          expect(l.slot).toBe(g % stages);
        },
      ),
    );
  });

  /**
   * Runs the ring protocol (prologue, then `splitDRingStep` for each step) on a model of one
   * thread's cp.async groups and the block's barriers; returns every violation: a step reading a
   * load that is not the one it expects, or that did not land before a barrier that precedes the
   * read; a copy into a slot whose previous load was read with no barrier since; a load issued
   * twice or never; groups not committed one per issue.
   */
  function simulateRing(stages: number, qk: number, v: number, tiles: number, step = splitDRingStep(stages)): string[] {
    const total = tiles * (qk + v);
    const ring = new SplitDRingModel();
    const issued = new Set<number>();
    const issue = (g: number): void => {
      const l = splitDLoadOf(g, qk, v, stages);
      if (l.tile < tiles) {
        if (issued.has(g)) ring.violations.push(`load ${g} issued twice`);
        issued.add(g);
        ring.load(g, l.slot);
      } else ring.empty();
    };
    for (let g = 0; g < splitDRingPrologueLoads(stages); g++) issue(g);
    for (let g = 0; g < total; g++) ring.step(step, g, splitDLoadOf(g, qk, v, stages).slot, issue);
    for (let g = 0; g < total; g++) if (!issued.has(g)) ring.violations.push(`load ${g} never issued`);
    return ring.violations;
  }

  it('every depth: each load lands and is published before its step reads it; no slot is overwritten before every warp read it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 5 }),
        (stages, qk, v, tiles) => {
          expect(simulateRing(stages, qk, v, tiles)).toEqual([]);
        },
      ),
    );
  });

  it('the model catches broken protocols: no barrier, a wait too shallow, the issue before the barrier', () => {
    expect(
      simulateRing(
        3,
        4,
        2,
        2,
        splitDRingStep(3).filter((op) => op.op !== 'sync'),
      ),
    ).not.toEqual([]);
    expect(simulateRing(3, 4, 2, 2, [{ op: 'wait', pending: 2 }, ...splitDRingStep(3).slice(1)])).not.toEqual([]);
    const [wait, sync, issue, compute] = splitDRingStep(3);
    expect(simulateRing(3, 4, 2, 2, [wait!, issue!, sync!, compute!])).not.toEqual([]);
    const one = splitDRingStep(1);
    expect(simulateRing(1, 4, 2, 2, one.slice(0, -1))).not.toEqual([]);
  });

  it('steps: stages ≥ 2 wait for all but stages − 2 groups, sync, issue g + stages − 1, compute; one stage syncs after computing', () => {
    expect(splitDRingStep(3)).toEqual([{ op: 'wait', pending: 1 }, { op: 'sync' }, { op: 'issue', ahead: 2 }, { op: 'compute' }]);
    expect(splitDRingStep(2)[0]).toEqual({ op: 'wait', pending: 0 });
    expect(splitDRingStep(1)).toEqual([
      { op: 'issue', ahead: 0 },
      { op: 'wait', pending: 0 },
      { op: 'sync' },
      { op: 'compute' },
      { op: 'sync' },
    ]);
    expect([1, 2, 3, 4].map(splitDRingPrologueLoads)).toEqual([0, 1, 2, 3]);
  });
});

describe('O accumulator chunks', () => {
  it('chunk v, n8 tile j of the P·V chunk GEMM is register v·32 + 4j of O (property, against the O distribution)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 7 }), (dv64, v0, j) => {
        const p = new FmhaFwdSm80SplitDPipeline(policy({ headDimV: 64 * dv64 }));
        const v = v0 % dv64;
        const whole = p.oEncoding.calculateD([0, (8 * v + j) >> 1, j & 1, 0, 0]);
        expect(splitDChunkAccumulatorOffset(v, p.pv.accumulatorOffset(0, j), p.pv.accumulatorsPerThread)).toBe(whole);
        expect(whole).toBe(32 * v + 4 * j);
      }),
    );
  });
});

describe('FmhaFwdSm80SplitDPipeline emission', () => {
  it('emits the ring: a runtime loop over Q·Kᵀ chunks, one unrolled P·V step per 64-column chunk, waits of stages − 2', () => {
    const p = new FmhaFwdSm80SplitDPipeline(policy({ headDim: 320, headDimV: 192, stages: 3 }));
    const text = emitFmhaFwdSm80TestBody(p, { masked: true });
    expect(text).toMatch(/#pragma unroll 1\n\s*for \(int c = 0; c < 5; \+\+c\) \{/);
    // 5 Q·Kᵀ chunks (the loop body has one step) + 3 V chunks: 4 steps, each waits for all but one group.
    expect(text.match(/tk_cp_async_wait_group<1>\(\);/g)).toHaveLength(4);
    expect(text.match(/tk_cp_async_wait_group<0>\(\);/g)).toHaveLength(1);
    expect(text).not.toContain('__shared__ unsigned char');
    expect(text).toContain('tk_mma_m16n8k16_f32_f16_f16_f32(&o_acc[64]');
    expect(text).toContain('float o_acc[96];');
    expect(text).not.toContain('tk_mma_m16n8k16_f16_f16_f16_f16');
  });

  /**
   * The key loop's shared-memory and group events in emitted order, one letter each: W wait_group,
   * S __syncthreads, C cp.async (a run of copies), G commit_group, R ldmatrix (a run of reads).
   */
  function loopEvents(text: string): string {
    const loop = text.slice(text.indexOf('for (int it = 0; it < k_iters; ++it)'), text.lastIndexOf('tk_cp_async_wait_group<0>();'));
    const letter = (m: string): string =>
      m.startsWith('tk_cp_async_wait')
        ? 'W'
        : m.startsWith('__sync')
          ? 'S'
          : m.startsWith('tk_cp_async_cg')
            ? 'C'
            : m.startsWith('tk_cp_async_commit')
              ? 'G'
              : 'R';
    const letters = [
      ...loop.matchAll(/tk_cp_async_wait_group<|__syncthreads\(\)|tk_cp_async_cg_16\(|tk_cp_async_commit_group\(\)|tk_ldmatrix_x4/g),
    ].map((m) => letter(m[0]));
    return letters.join('').replace(/C+/g, 'C').replace(/R+/g, 'R');
  }

  it.each([1, 2, 3, 4])('the emitted steps follow splitDRingStep (stages %i): wait, barrier, issue + commit, reads', (stages) => {
    const p = new FmhaFwdSm80SplitDPipeline(policy({ headDim: 128, headDimV: 128, stages }));
    const events = loopEvents(emitFmhaFwdSm80TestBody(p, { masked: true }));
    // One Q·Kᵀ step in the runtime chunk loop, then 2 unrolled V steps (a step's issue: Q/K or V copies, then one commit).
    const step = stages === 1 ? 'CGWSRS' : 'WSCGR';
    expect(events).toBe(step.repeat(3));
  });

  it('with f16 P·V accumulation: f16 mma into a chunk accumulator, widened and added to O', () => {
    const p = new FmhaFwdSm80SplitDPipeline(policy({ headDim: 128, headDimV: 128, stages: 1, qkChunk: 16, pvAccumulation: 'f16' }));
    const text = emitFmhaFwdSm80TestBody(p, { target: sm90a });
    expect(text).toContain('mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16');
    expect(text).toContain('tk_add_f16x2_to_f32(&o_acc[');
    // One stage: wait for everything, every step.
    expect(text.match(/tk_cp_async_wait_group<0>\(\);/g)!.length).toBe(1 + 2 + 1);
  });
});
