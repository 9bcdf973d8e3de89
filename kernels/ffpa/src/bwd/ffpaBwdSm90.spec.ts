// The sm_90a path of FFPA's backward without a GPU: the catalog's names and launch shape, the kernel
// set's path choice (sm90 by default where its catalog has the problem, sm80 otherwise or when asked),
// the layout TMA needs (an ArgumentError naming `problem` before anything is built or launched), and
// the packing of a launch with a fake TMA encoder.
import { sm90a } from '@tilekit/codegen';
import {
  causalBottomRight,
  checkFmhaBwdProblem,
  checkFmhaBwdTraits,
  fmhaBwdTraitsOf,
  FMHA_BWD_SPLIT_D_KEY_DQ_ORDER,
  fmhaBwdTripleMismatches,
  makeFmhaBwdWorkspace,
  type AttentionTensorStrides,
  type CheckedFmhaBwdProblem,
  type FmhaBwdArgs,
} from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import type { Device, TiledTensorMapOptions } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { checkFfpaBwdProblem, type FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { ffpaBwdDefaultPath, ffpaBwdKernelSet, NoFfpaBwdInstanceError } from './ffpaBwdKernelSet.ts';
import { FfpaBwdRunner } from './ffpaBwdRunner.ts';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';
import { checkFfpaBwdSm90Catalog, FFPA_BWD_SM90_CATALOG, ffpaBwdSm90Instance } from './ffpaBwdSm90Catalog.ts';
import { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';
import { ffpaBwdSm90LayoutProblems, packFfpaBwdSm90DqDkDv } from './ffpaBwdSm90Launcher.ts';

const base: FfpaBwdProblem = { dtype: 'bf16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 512, seqlenQ: 100, seqlenK: 130, mask: 't' };

/** A device every access to which throws: nothing may touch it before the layout is rejected. */
const untouchable = new Proxy({} as Device, {
  get: (_, key) => {
    throw new Error(`the device was used (${String(key)})`);
  },
});

function fakeArgs(p: CheckedFmhaBwdProblem, strides: AttentionTensorStrides, extra: object = {}): FmhaBwdArgs {
  const tensor = { ptr: 0x10000n, strides };
  return {
    q: tensor,
    k: tensor,
    v: tensor,
    o: tensor,
    dO: tensor,
    dQ: tensor,
    dK: tensor,
    dV: tensor,
    lse: { ptr: 0x2000n, strides: p.lseStrides },
    d: { ptr: 0x3000n, strides: p.lseStrides },
    scale: p.scale,
    workspace: 0x9000n,
    ...extra,
  };
}

describe('ffpa sm_90a backward catalog', () => {
  it('one instance per dtype, FFPA head-dim pair, mask kind and dQ order; names unique, ffpa_bwd_sm90_…[_dqord]', () => {
    expect(() => checkFfpaBwdSm90Catalog(FFPA_BWD_SM90_CATALOG)).not.toThrow();
    expect(FFPA_BWD_SM90_CATALOG).toHaveLength(2 * FFPA_HEAD_DIMS.length * 2 * 2);
    expect(FFPA_BWD_SM90_CATALOG.filter((i) => i.keyOrdered)).toHaveLength(2 * FFPA_HEAD_DIMS.length * 2);
    const pairs = new Set(FFPA_BWD_SM90_CATALOG.map((i) => `${i.policy.headDim}x${i.policy.headDimV}`));
    expect(pairs).toEqual(new Set(FFPA_HEAD_DIMS.map((p) => `${p.hdimQ}x${p.hdimV}`)));
    for (const i of FFPA_BWD_SM90_CATALOG) {
      const P = i.policy;
      const hdim = P.headDim === P.headDimV ? `${P.headDim}` : `${P.headDim}x${P.headDimV}`;
      expect(i.name).toBe(`ffpa_bwd_sm90_${P.dtype}_d${hdim}_${P.mask}_64x64_w256_s2${i.keyOrdered ? '_dqord' : ''}_sm_90a`);
      expect(i.keyOrdered).toBe(P.dqOrder === FMHA_BWD_SPLIT_D_KEY_DQ_ORDER);
      expect(P).toMatchObject({ sliceWidth: 256, sliceStages: 2, producerRegisters: 40, consumerRegisters: 232 });
      expect(i.pipeline.clusterCtas).toBe(Math.max(P.headDim, P.headDimV) <= 512 ? 2 : 4);
      expect(i.target).toBe(sm90a);
      expect([i.threads, i.sharedBytes, i.kN0]).toEqual([384, i.pipeline.sharedBytes, 64]);
      expect(i.tmaBoxes).toEqual({ q: [64, 64, 1, 1], kv: [64, 64, 1, 1] });
    }
    expect(FFPA_BWD_SM90_CATALOG.map((i) => i.name)).toContain('ffpa_bwd_sm90_bf16_d512_none_64x64_w256_s2_sm_90a');
    expect(FFPA_BWD_SM90_CATALOG.map((i) => i.name)).toContain('ffpa_bwd_sm90_bf16_d1024_window_64x64_w256_s2_dqord_sm_90a');
  });

  it('the launch: x = key tiles × cluster CTAs (⌈d / 256⌉ rounded up to 2 or 4), clusters [CTAs, 1, 1] along x, y = key heads, z = batch', () => {
    const i = ffpaBwdSm90Instance('fp16', 512, 512, 'window');
    expect(i.pipeline.slices).toBe(2);
    expect(i.launch(3, 2, 129)).toEqual({ grid: [6, 2, 3], block: [384, 1, 1], sharedBytes: i.sharedBytes, cluster: [2, 1, 1] });
    expect(i.launch(1, 1, 0).grid).toEqual([2, 1, 1]);
    expect(ffpaBwdSm90Instance('bf16', 320, 320, 'none').launch(1, 1, 64).grid).toEqual([2, 1, 1]);
    const wide = ffpaBwdSm90Instance('bf16', 768, 768, 'none');
    expect([wide.pipeline.slices, wide.pipeline.clusterCtas]).toEqual([3, 4]);
    expect(wide.launch(1, 1, 65)).toMatchObject({ grid: [8, 1, 1], cluster: [4, 1, 1] });
  });
});

describe('ffpaBwdKernelSet: the path', () => {
  it('sm90 by default for d512 bf16 (every mask kind), with records the launcher accepts', () => {
    for (const mask of ['0', 't', 'b:40,3']) {
      const p = checkFfpaBwdProblem({ ...base, mask });
      expect(ffpaBwdDefaultPath(p)).toBe('sm90');
      const set = ffpaBwdKernelSet(p);
      expect(set.path).toBe('sm90');
      expect(set.dqDkDv).toBeInstanceOf(FfpaBwdSm90Instance);
      expect(set.dqDkDv.name).toBe(`ffpa_bwd_sm90_bf16_d512_${mask === '0' ? 'none' : 'window'}_64x64_w256_s2_sm_90a`);
      expect(fmhaBwdTripleMismatches(set.triple, checkFmhaBwdTraits(fmhaBwdTraitsOf(p)))).toEqual([]);
      expect(set.triple.dqDkDv).toMatchObject({ dqAccumulation: 'atomic', kN0: 64, name: set.dqDkDv.name });
    }
  });

  it('sm90 by default up to d1024 (d576/512 too), and sm80 whenever path sm80 is asked', () => {
    for (const [hdimQ, hdimV] of [
      [1024, 1024],
      [576, 512],
    ] as const) {
      const set = ffpaBwdKernelSet(checkFfpaBwdProblem({ ...base, hdimQ, hdimV }));
      expect(set.path).toBe('sm90');
      expect(set.dqDkDv.name).toMatch(/^ffpa_bwd_sm90_bf16_d/);
      const sm80 = ffpaBwdKernelSet(checkFfpaBwdProblem({ ...base, hdimQ, hdimV }), { path: 'sm80' });
      expect(sm80.dqDkDv).toBeInstanceOf(FfpaBwdInstance);
    }
    const set = ffpaBwdKernelSet(checkFfpaBwdProblem(base), { path: 'sm80' });
    expect([set.path, set.dqDkDv.name]).toEqual(['sm80', 'ffpa_bwd_sm80_bf16_d512_window_64x64_w128_s2_sm_90a']);
    expect(set.triple.dqDkDv.name).toBe(set.dqDkDv.name);
  });

  it('deterministic: the key-ordered sm90 instance, its triple `ordered` (kM0 64) accepted by the launcher; path sm80 is refused', () => {
    const { seqlenQ: _q, seqlenK: _k, ...rest } = base;
    const group: FfpaBwdProblem = { ...rest, batch: 3, seqstartQ: [0, 17, 17, 144], seqstartK: [0, 5, 300, 300] };
    for (const [mode, problem] of [
      ['batch', base],
      ['group', group],
    ] as const) {
      const p = checkFfpaBwdProblem({ ...problem, deterministic: true });
      expect([p.mode, ffpaBwdDefaultPath(p)]).toEqual([mode, 'sm90']);
      const set = ffpaBwdKernelSet(p);
      if (set.path !== 'sm90') throw new Error('expected the sm90 path');
      expect(set.dqDkDv.keyOrdered).toBe(true);
      expect(set.dqDkDv.name).toBe('ffpa_bwd_sm90_bf16_d512_window_64x64_w256_s2_dqord_sm_90a');
      expect(set.triple.dqDkDv).toMatchObject({ dqAccumulation: 'ordered', kN0: 64, kM0: 64 });
      expect(set.triple.convertDq?.deterministic).toBe(false);
      expect(fmhaBwdTripleMismatches(set.triple, checkFmhaBwdTraits(fmhaBwdTraitsOf(p)))).toEqual([]);
      expect(Object.keys(set.dqDkDv.signature.params)).toEqual(expect.arrayContaining(['dq_counter', 'dq_counter_tiles']));
      expect(() => ffpaBwdKernelSet(p, { path: 'sm80' })).toThrow(expect.objectContaining({ argument: 'options.path' }));
    }
    expect(ffpaBwdKernelSet(checkFfpaBwdProblem(base)).dqDkDv.name).not.toContain('dqord');
  });

  it('path sm90 where its catalog lacks the problem: NoFfpaBwdInstanceError; another path: ArgumentError naming options.path', () => {
    expect(() => ffpaBwdKernelSet(checkFfpaBwdProblem({ ...base, hdimQ: 1024 }), { path: 'sm90', sm90Catalog: [] })).toThrow(
      NoFfpaBwdInstanceError,
    );
    expect(() => ffpaBwdKernelSet(checkFfpaBwdProblem(base), { path: 'sm70' as never })).toThrow(
      expect.objectContaining({ argument: 'options.path' }),
    );
  });
});

describe('ffpa sm_90a backward: the layout TMA needs', () => {
  it('lists every Q/K/V/dO stride whose bytes are not a multiple of 16 or reach 2^40', () => {
    const strides = {
      q: { row: 516, head: 516 * 100, batch: 516 * 400 },
      v: { row: 512, head: 512 * 130 + 4, batch: 2 * (512 * 130 + 4) },
    };
    const p = checkFmhaBwdProblem({ ...base, mask: '0', strides } as never);
    expect(ffpaBwdSm90LayoutProblems(p)).toEqual([
      'q row stride 516: times the element size must be a multiple of 16 bytes (TMA)',
      'v head stride 66564: times the element size must be a multiple of 16 bytes (TMA)',
    ]);
    expect(ffpaBwdSm90LayoutProblems(checkFfpaBwdProblem(base))).toEqual([]);
  });

  it('the runner on the sm90 path rejects such a layout with an ArgumentError naming problem, before touching the device', async () => {
    const big = 2 ** 39;
    const problem = { ...base, batch: 1, strides: { q: { row: 512, head: big, batch: 4 * big } } } as FfpaBwdProblem;
    const error = await FfpaBwdRunner.create(problem, { device: untouchable, compiler: undefined as never }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect(error).toMatchObject({ argument: 'problem' });
    expect((error as Error).message).toMatch(/q head stride 549755813888: reaches 2\^40 bytes \(TMA\)/);
  });
});

describe('packFfpaBwdSm90DqDkDv', () => {
  it('group mode: one batch of every row in each map, 64×64 boxes, grid from the longest key slot', () => {
    const starts = (lens: number[]) => lens.reduce((a, n) => [...a, a.at(-1)! + n], [0]);
    const p = checkFfpaBwdProblem({
      dtype: 'fp16',
      batch: 3,
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 320,
      seqstartQ: starts([17, 0, 127]),
      seqstartK: starts([17, 259, 5]),
      mask: causalBottomRight,
    });
    const set = ffpaBwdKernelSet(p);
    if (set.path !== 'sm90') throw new Error('expected the sm90 path');
    const t = checkFmhaBwdTraits(fmhaBwdTraitsOf(p));
    const maps: TiledTensorMapOptions[] = [];
    const args = fakeArgs(p, { batch: 0, head: 320, row: 4 * 320 }, { seqstartQ: 0x400n, seqstartK: 0x500n });
    const ws = makeFmhaBwdWorkspace(t, set.triple.dqDkDv, 132);
    const l = packFfpaBwdSm90DqDkDv(set.dqDkDv, t, ws, args, (m) => (maps.push(m), new Uint8Array(128)));
    expect(l.grid).toEqual([Math.ceil(259 / 64) * 2, 2, 3]);
    expect(l.block).toEqual([384, 1, 1]);
    expect(l.cluster).toEqual([2, 1, 1]);
    expect(maps.map((m) => m.globalDims)).toEqual([
      [320, 144, 4, 1],
      [320, 281, 2, 1],
      [320, 281, 2, 1],
      [320, 144, 4, 1],
    ]);
    for (const m of maps) expect([m.boxDims, m.swizzle, m.oobFill, m.dtype]).toEqual([[64, 64, 1, 1], '128B', 'zero', 'float16']);
  });
});
