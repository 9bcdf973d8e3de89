// The leaf copy/sync intrinsics: golden text, nvcc compiles (one batched .cu per arch, warnings as
// errors), per-target availability (TargetFeatureError), once-per-file emission, argument checks.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockBuilder } from '../blockBuilder.ts';
import { array, float32, int32, pointer, uint8, uint32, uint64 } from '../cType.ts';
import { CodegenTypeError, TargetFeatureError } from '../errors.ts';
import type { Expr } from '../expr.ts';
import { tensorMapType } from '../kernel/kernelParam.ts';
import { addressOf, index, variable } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { sm80, sm90a } from '../cudaTarget.ts';
import { gfx942 } from '../hipTarget.ts';
import { host } from '../hostTarget.ts';
import type { Target } from '../target.ts';
import { toolAvailable } from '../testing/compileAndRunHost.ts';
import { intrinsicSamplesSource } from '../testing/intrinsicSamples.ts';
import { fenceMbarrierInit, fenceProxyAsyncShared } from './asyncFence.ts';
import {
  clusterCtaRank,
  clusterSync,
  loadSharedClusterU32,
  mapaShared,
  mbarrierArriveClusterWarp,
  storeAsyncClusterV4,
  storeSharedClusterU32,
} from './cluster.ts';
import { cpAsync, cpAsyncCommitGroup, cpAsyncMbarrierArrive, cpAsyncWaitGroup } from './cpAsync.ts';
import { emitAsm } from './deviceHelper.ts';
import { electSync } from './electSync.ts';
import { gridDependencyLaunchDependents, gridDependencyWait } from './gridDependency.ts';
import { ldmatrix } from './ldmatrix.ts';
import {
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierArriveWarp,
  mbarrierInit,
  mbarrierInval,
  mbarrierTryWaitParity,
  mbarrierWaitParity,
  mbarrierWaitParityCluster,
} from './mbarrier.ts';
import { setMaxNReg } from './setmaxnreg.ts';
import { sharedAddress } from './sharedAddress.ts';
import { fenceProxyAsyncGlobal, releaseAddGlobal, waitGlobalAtLeast } from './globalFlag.ts';
import { bulkCommitGroup, bulkWaitGroup, prefetchTensorMap, tmaLoad, tmaStore } from './tma.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc)
  console.warn(
    `\n!!! SKIPPING the intrinsics nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). The wrappers are NOT being compiled. !!!\n`,
  );

// Stand-ins of the right types (only their types matter until something renders them).
const smem = variable('smem', array(uint8, 4096));
const gmem = variable('gmem', pointer(uint8, { const: true }));
const bar = variable('bar', array(uint64, 1));
const regs = variable('regs', array(uint32, 4));
// The body-side type of a tensor-map kernel parameter (what `defineEntry` hands the body).
const map = variable('map', tensorMapType);
// A shared::cluster address (what mapa returns) and a float.
const remote = variable('remote', uint32);
const f = variable('f', float32);
// A global int32 counter.
const counter = variable('counter', pointer(int32));

/** Every sm_80-level wrapper, called once on `t`. */
const sm80Set: Readonly<Record<string, (t: Target) => Expr>> = {
  sharedAddress: (t) => sharedAddress(t, smem),
  cpAsync16: (t) => cpAsync(t, { dst: smem, src: gmem, bytes: 16, srcBytes: 0 }),
  cpAsync4: (t) => cpAsync(t, { dst: smem, src: gmem, bytes: 4 }),
  cpAsyncCommitGroup: (t) => cpAsyncCommitGroup(t),
  cpAsyncWaitGroup: (t) => cpAsyncWaitGroup(t, 0),
  cpAsyncMbarrierArrive: (t) => cpAsyncMbarrierArrive(t, bar),
  ldmatrix: (t) => ldmatrix(t, { count: 4, trans: true, dst: regs, src: smem }),
  mbarrierInit: (t) => mbarrierInit(t, bar, 1),
  mbarrierArrive: (t) => mbarrierArrive(t, bar),
  mbarrierArriveWarp: (t) => mbarrierArriveWarp(t, bar),
  mbarrierInval: (t) => mbarrierInval(t, bar),
  waitGlobalAtLeast: (t) => waitGlobalAtLeast(t, counter, 3),
  releaseAddGlobal: (t) => releaseAddGlobal(t, counter, 1),
};

/** Every sm_90a-only wrapper, called once on `t`. */
const sm90Set: Readonly<Record<string, (t: Target) => Expr>> = {
  mbarrierArriveExpectTx: (t) => mbarrierArriveExpectTx(t, bar, 8192),
  mbarrierTryWaitParity: (t) => mbarrierTryWaitParity(t, bar, 0),
  mbarrierWaitParity: (t) => mbarrierWaitParity(t, bar, 1),
  fenceProxyAsyncShared: (t) => fenceProxyAsyncShared(t),
  fenceMbarrierInit: (t) => fenceMbarrierInit(t),
  tmaLoad: (t) => tmaLoad(t, { dst: smem, map, bar, coords: [0, 64] }),
  tmaStore: (t) => tmaStore(t, { map, src: smem, coords: [0, 64, 1] }),
  bulkCommitGroup: (t) => bulkCommitGroup(t),
  bulkWaitGroup: (t) => bulkWaitGroup(t, 0, { read: true }),
  prefetchTensorMap: (t) => prefetchTensorMap(t, map),
  setMaxNReg: (t) => setMaxNReg(t, 'inc', 240),
  electSync: (t) => electSync(t),
  gridDependencyWait: (t) => gridDependencyWait(t),
  gridDependencyLaunchDependents: (t) => gridDependencyLaunchDependents(t),
  clusterCtaRank: (t) => clusterCtaRank(t),
  clusterSync: (t) => clusterSync(t),
  mapaShared: (t) => mapaShared(t, smem, 1),
  storeAsyncClusterV4: (t) => storeAsyncClusterV4(t, remote, remote, [f, f, f, f]),
  mbarrierArriveClusterWarp: (t) => mbarrierArriveClusterWarp(t, remote),
  loadSharedClusterU32: (t) => loadSharedClusterU32(t, remote),
  storeSharedClusterU32: (t) => storeSharedClusterU32(t, remote, remote),
  mbarrierWaitParityCluster: (t) => mbarrierWaitParityCluster(t, bar, 1),
  fenceProxyAsyncGlobal: (t) => fenceProxyAsyncGlobal(t),
};

function compileCubin(target: Target, source: string): void {
  const dir = mkdtempSync(join(tmpdir(), `tilekit-intrinsics-${target.name}-`));
  try {
    const file = join(dir, 'intrinsics.cu');
    writeFileSync(file, source);
    const args = [
      `-arch=${target.arch as string}`,
      '-cubin',
      '-std=c++17',
      '-Werror',
      'all-warnings',
      '-o',
      join(dir, 'intrinsics.cubin'),
      file,
    ];
    const res = spawnSync(nvcc, args, { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Error(`${nvcc} ${args.join(' ')} failed:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('intrinsics: emitted helpers', () => {
  it('match the golden file (every wrapper on sm_90a)', async () => {
    await expect(intrinsicSamplesSource(sm90a)).toMatchFileSnapshot('../__snapshots__/intrinsics.sm_90a.cu');
  });

  it.skipIf(!hasNvcc)('compile with nvcc, warnings as errors: the sm_80 set for sm_80, everything for sm_90a (one .cu each)', () => {
    compileCubin(sm80, intrinsicSamplesSource(sm80));
    compileCubin(sm90a, intrinsicSamplesSource(sm90a));
  });

  it('are emitted once per file, each after the helpers it calls', () => {
    const src = new SourceBuilder({ dialect: sm90a });
    src.function(
      { name: 'k', qualifiers: sm90a.kernelQualifiers(), params: { in: pointer(uint8, { const: true }) } },
      (b, { in: input }) => {
        const tile = sm90a.declareShared(b, 'tile', uint8, 64, { align: 16 });
        const mb = sm90a.declareShared(b, 'mb', uint64, 2, { align: 8 });
        for (let i = 0; i < 3; i += 1) b.expr(cpAsync(sm90a, { dst: addressOf(index(tile, i * 16)), src: input, bytes: 16 }));
        b.expr(mbarrierInit(sm90a, mb, 1));
        b.expr(mbarrierWaitParity(sm90a, addressOf(index(mb, 1)), 0));
        b.expr(mbarrierWaitParity(sm90a, mb, 1));
      },
    );
    const text = src.render();
    const definitions = (name: string): number =>
      text.split('\n').filter((l) => l.startsWith('__device__') && l.includes(` ${name}(`)).length;
    for (const name of [
      'tk_smem_addr',
      'tk_cp_async_cg_16',
      'tk_mbarrier_init',
      'tk_mbarrier_try_wait_parity',
      'tk_mbarrier_wait_parity',
    ]) {
      expect(definitions(name), name).toBe(1);
    }
    const at = (needle: string): number => text.indexOf(needle);
    expect(at('unsigned int tk_smem_addr(')).toBeLessThan(at('void tk_cp_async_cg_16('));
    expect(at('bool tk_mbarrier_try_wait_parity(')).toBeLessThan(at('void tk_mbarrier_wait_parity('));
    expect(text).not.toContain('tk_mbarrier_arrive');
  });
});

/** Each `tk_*` helper defined in `text`, with the line it starts at and the helpers its body calls. */
function helperDefinitions(text: string): Map<string, { readonly at: number; readonly calls: readonly string[] }> {
  const lines = text.split('\n');
  const defs = new Map<string, { at: number; calls: string[] }>();
  lines.forEach((line, at) => {
    const m = /^__device__ __forceinline__ [^(]* (tk_\w+)\(/.exec(line);
    if (m === null) return;
    const calls: string[] = [];
    for (let k = at + 1; k < lines.length && lines[k] !== '}'; k += 1)
      for (const c of (lines[k] as string).matchAll(/\b(tk_\w+)[<(]/g)) calls.push(c[1] as string);
    expect(defs.has(m[1] as string), `${m[1]} defined twice`).toBe(false);
    defs.set(m[1] as string, { at, calls });
  });
  return defs;
}

describe('intrinsics: once-per-file emission (property)', () => {
  it('any sequence of wrapper calls defines each helper once, after every helper it calls and before the kernel', () => {
    const all = { ...sm80Set, ...sm90Set };
    const names = Object.keys(all);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 24 }), (picked) => {
        const src = new SourceBuilder({ dialect: sm90a });
        src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers() }, (b) => {
          for (const name of picked) b.expr((all[name] as (t: Target) => Expr)(sm90a));
        });
        const text = src.render();
        const defs = helperDefinitions(text);
        const kernelAt = text.split('\n').findIndex((l) => l.startsWith('extern "C"'));
        for (const [name, def] of defs) {
          expect(def.at, name).toBeLessThan(kernelAt);
          for (const callee of def.calls) {
            if (callee === name) continue;
            const d = defs.get(callee);
            expect(d, `${name} calls ${callee}, which is not defined`).toBeDefined();
            expect((d as { at: number }).at, `${callee} before ${name}`).toBeLessThan(def.at);
          }
        }
        // Every helper the kernel calls is defined.
        const kernelText = text.split('\n').slice(kernelAt).join('\n');
        for (const c of kernelText.matchAll(/\b(tk_\w+)[<(]/g)) expect(defs.has(c[1] as string), c[1]).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe('intrinsics: availability per target', () => {
  it('the sm_80 set works on sm_80 and sm_90a and raises TargetFeatureError on host and gfx942', () => {
    for (const [name, call] of Object.entries(sm80Set)) {
      expect(() => call(sm80), name).not.toThrow();
      expect(() => call(sm90a), name).not.toThrow();
      for (const t of [host, gfx942]) expect(() => call(t), `${name} on ${t.name}`).toThrow(TargetFeatureError);
    }
  });

  it('the sm_90a set raises TargetFeatureError naming target and feature on sm_80, host and gfx942', () => {
    for (const [name, call] of Object.entries(sm90Set)) {
      expect(() => call(sm90a), name).not.toThrow();
      for (const t of [sm80, host, gfx942]) {
        let error: unknown;
        try {
          call(t);
        } catch (e) {
          error = e;
        }
        expect(error, `${name} on ${t.name}`).toBeInstanceOf(TargetFeatureError);
        const e = error as TargetFeatureError;
        expect(e.target).toBe(t.name);
        expect(e.code).toBe('codegen/unsupported-feature');
        expect(e.message).toMatch(/\[[a-z-]+\]/);
      }
    }
    expect(() => tmaLoad(gfx942, { dst: smem, map, bar, coords: [0] })).toThrow(
      /gfx942.*cp\.async\.bulk\.tensor.*\[tma\].*no gfx942 equivalent/,
    );
  });
});

describe('intrinsics: argument checks', () => {
  it('reject what PTX rejects, naming the argument', () => {
    expect(() => cpAsync(sm80, { dst: smem, src: gmem, bytes: 8, cache: 'cg' })).toThrow(ArgumentError);
    expect(() => cpAsync(sm80, { dst: smem, src: gmem, bytes: 12 as 16 })).toThrow(/bytes/);
    expect(() => cpAsync(sm80, { dst: smem, src: gmem, bytes: 16, srcBytes: 17 })).toThrow(/srcBytes/);
    expect(() => cpAsync(sm80, { dst: variable('x', int32), src: gmem, bytes: 16 })).toThrow(CodegenTypeError);
    expect(() => cpAsyncWaitGroup(sm80, -1)).toThrow(/pending/);
    expect(() => ldmatrix(sm80, { count: 3 as 4, dst: regs, src: smem })).toThrow(/count/);
    expect(() => ldmatrix(sm80, { count: 4, dst: variable('r', array(int32, 4)), src: smem })).toThrow(/unsigned int/);
    expect(() => ldmatrix(sm80, { count: 4, dst: variable('r', array(uint32, 2)), src: smem })).toThrow(/at least 4/);
    expect(() => mbarrierInit(sm80, bar, 0)).toThrow(/count/);
    expect(() => mbarrierArriveExpectTx(sm90a, bar, 1 << 20)).toThrow(/txBytes/);
    expect(() => tmaLoad(sm90a, { dst: smem, map, bar, coords: [] })).toThrow(/coords/);
    expect(() => tmaLoad(sm90a, { dst: smem, map, bar, coords: [0, 0, 0, 0, 0, 0] })).toThrow(/coords/);
    expect(() => tmaStore(sm90a, { map: variable('m', int32), src: smem, coords: [0] })).toThrow(/map/);
    expect(() => tmaStore(sm90a, { map, src: smem, coords: [0, -40] })).toThrow(/coords\[1\].*>= 0.*illegal instruction/);
    expect(() => tmaStore(sm90a, { map, src: smem, coords: [-16, 0] })).toThrow(ArgumentError);
    // A coordinate that may be negative only at run time is the caller's to keep >= 0.
    expect(() => tmaStore(sm90a, { map, src: smem, coords: [variable('x', int32), 0] })).not.toThrow();
    expect(() => setMaxNReg(sm90a, 'inc', 20)).toThrow(/registers/);
    expect(() => setMaxNReg(sm90a, 'dec', 100)).toThrow(/multiple of 8/);
    expect(() => bulkWaitGroup(sm90a, 1.5)).toThrow(/pending/);
    expect(() => emitAsm(new BlockBuilder(), { ptx: ['mov.u32 %0, "x";'] })).toThrow(/quotes/);
  });

  it('cluster wrappers: an address where PTX takes a local shared address, an integer where it takes a shared::cluster address or rank', () => {
    const notAddress = variable('x', int32);
    expect(() => mapaShared(sm90a, notAddress, 1)).toThrow(CodegenTypeError);
    expect(() => mapaShared(sm90a, notAddress, 1)).toThrow(/ptr.*pointer or an array/);
    expect(() => mapaShared(sm90a, smem, f)).toThrow(/rank.*integer/);
    expect(() => mbarrierWaitParityCluster(sm90a, notAddress, 0)).toThrow(/bar.*pointer or an array/);
    expect(() => mbarrierWaitParityCluster(sm90a, bar, f)).toThrow(/parity.*integer/);
    expect(() => storeAsyncClusterV4(sm90a, smem, remote, [f, f, f, f])).toThrow(/addr.*integer/);
    expect(() => storeAsyncClusterV4(sm90a, remote, bar, [f, f, f, f])).toThrow(/bar.*integer/);
    expect(() => mbarrierArriveClusterWarp(sm90a, bar)).toThrow(CodegenTypeError);
    expect(() => mbarrierArriveClusterWarp(sm90a, f)).toThrow(/bar.*integer/);
    expect(() => loadSharedClusterU32(sm90a, smem)).toThrow(/addr.*integer/);
    expect(() => storeSharedClusterU32(sm90a, remote, f)).toThrow(/value.*integer/);
    expect(() => loadSharedClusterU32(sm80, remote)).toThrow(TargetFeatureError);
    expect(() => storeSharedClusterU32(host, remote, 1)).toThrow(TargetFeatureError);
    for (const ok of [
      () => mapaShared(sm90a, addressOf(index(smem, 16)), remote),
      () => storeAsyncClusterV4(sm90a, remote, remote, [f, f, f, f]),
      () => mbarrierArriveClusterWarp(sm90a, remote),
      () => mbarrierWaitParityCluster(sm90a, addressOf(index(bar, 0)), remote),
      () => loadSharedClusterU32(sm90a, remote),
      () => storeSharedClusterU32(sm90a, remote, 7),
    ])
      expect(ok).not.toThrow();
  });

  it(
    'cluster wrappers emit their PTX: %cluster_ctarank, barrier.cluster, mapa, st.async, ld/st.shared::cluster, ' +
      'a lane-0 remote arrive, the acquire.cluster wait',
    () => {
      const src = new SourceBuilder({ dialect: sm90a });
      src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers() }, (b) => {
        for (const name of [
          'clusterCtaRank',
          'clusterSync',
          'mapaShared',
          'storeAsyncClusterV4',
          'mbarrierArriveClusterWarp',
          'mbarrierWaitParityCluster',
          'loadSharedClusterU32',
          'storeSharedClusterU32',
        ])
          b.expr((sm90Set[name] as (t: Target) => Expr)(sm90a));
      });
      const text = src.render();
      for (const ptx of [
        'mov.u32 %0, %%cluster_ctarank;',
        'barrier.cluster.arrive.release;',
        'barrier.cluster.wait.acquire;',
        'mapa.shared::cluster.u32 %0, %1, %2;',
        'st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%2, %3, %4, %5}, [%1];',
        'bar.warp.sync 0xffffffff;',
        '@is_lane0 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];',
        'mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 complete, [%1], %2;',
        'ld.shared::cluster.u32 %0, [%1];',
        'st.shared::cluster.u32 [%0], %1;',
      ])
        expect(text, ptx).toContain(ptx);
      // mapa and the cluster wait take a local shared address: both through the one cvta helper.
      expect(text.split('\n').filter((l) => l.startsWith('__device__') && l.includes(' tk_smem_addr(')).length).toBe(1);
    },
  );
});
