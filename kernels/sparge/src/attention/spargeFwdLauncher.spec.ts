import { checkFmhaFwdProblem, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import { checkTiledTensorMap, type DeviceRange, type TiledTensorMapOptions } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { SPARGE_FWD_CATALOG } from './spargeFwdCatalog.ts';
import type { SpargeFwdInstance } from './spargeFwdInstance.ts';
import { prepareSpargeFwdLaunch, spargeFwdUnsupported, type SpargeFwdBuffers, type SpargeFwdLaunchProblem } from './spargeFwdLauncher.ts';

/** A fake device allocator: aligned, non-overlapping ranges (no GPU). */
function allocator(): (bytes: number) => DeviceRange {
  let next = 0x10000n;
  return (bytes) => {
    const r = { ptr: next, bytes };
    next += BigInt(Math.ceil(bytes / 256) * 256 + 256);
    return r;
  };
}

const encode = (o: TiledTensorMapOptions): Uint8Array => {
  checkTiledTensorMap(o);
  return new Uint8Array(128);
};

function find(pipeline: 'vsa' | 'jenga', pvSkip: boolean, int8: boolean, mask: 'none' | 'window' = 'none'): SpargeFwdInstance {
  return SPARGE_FWD_CATALOG.find(
    (i) =>
      i.policy.pipeline === pipeline &&
      i.policy.dtype === 'fp16' &&
      i.policy.headDim === 128 &&
      i.policy.mask === mask &&
      (i.policy.pvGate !== undefined) === pvSkip &&
      (i.policy.qkOperand?.tag === 'int8') === int8,
  )!;
}

function setup(over: Partial<SpargeFwdLaunchProblem> = {}, s = 1000) {
  const p = checkFmhaFwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 128, seqlenQ: s, seqlenK: s, mask: noMask });
  const problem: SpargeFwdLaunchProblem = {
    ...p,
    pipeline: 'vsa',
    pvMode: 'none',
    qBlocks: Math.ceil(s / 128),
    kBlocks: Math.ceil(s / 128),
    ...over,
  };
  const alloc = allocator();
  const n = 2 * 4 * s * 128 * 2;
  const cells = 2 * 4 * problem.qBlocks * problem.kBlocks;
  const buffers: SpargeFwdBuffers = {
    q: alloc(n),
    k: alloc(n / 2),
    v: alloc(n / 2),
    o: alloc(n),
    lut: alloc(4 * cells),
    validBlockNum: alloc(4 * 2 * 4 * problem.qBlocks),
    blockMap: alloc(cells),
    pvThreshold: alloc(16),
    q8: alloc(n / 2),
    k8: alloc(n / 4),
    qScale: alloc(4 * 2 * 4 * problem.qBlocks),
    kScale: alloc(4 * 2 * 2 * problem.kBlocks),
  };
  return { problem, buffers };
}

function argumentOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof ArgumentError) return e.argument;
    throw e;
  }
  return undefined;
}

describe('prepareSpargeFwdLaunch', () => {
  it('packs a valid vsa launch: grid (query blocks, heads, batch), the instance threads and shared memory', () => {
    const { problem, buffers } = setup();
    const inst = find('vsa', false, false);
    const r = prepareSpargeFwdLaunch(inst, problem, buffers, encode);
    expect(r.launch.grid).toEqual([8, 4, 2]);
    expect(r.launch.block).toEqual([inst.threads, 1, 1]);
    expect(r.launch.sharedBytes).toBe(inst.sharedBytes);
    expect(r.maps.q.dtype).toBe('float16');
  });

  it('int8 instances load Q and K as bytes with the head-dim box and a 128B swizzle at d128', () => {
    const { problem, buffers } = setup();
    const r = prepareSpargeFwdLaunch(find('vsa', false, true), problem, buffers, encode);
    expect(r.maps.q).toMatchObject({
      dtype: 'uint8',
      swizzle: '128B',
      boxDims: [128, 128, 1, 1],
      globalDims: [128, 1000, 4, 2],
      address: buffers.q8!.ptr,
    });
    expect(r.maps.k).toMatchObject({ dtype: 'uint8', globalDims: [128, 1000, 2, 2], address: buffers.k8!.ptr });
    expect(r.maps.v.dtype).toBe('float16');
  });

  it('names the broken argument before any launch', () => {
    const { problem, buffers } = setup();
    const vsa = find('vsa', false, false);
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, { ...problem, qBlocks: 7 }, buffers, encode))).toBe('qBlocks');
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, { ...problem, kBlocks: 9 }, buffers, encode))).toBe('kBlocks');
    const { lut: _lut, ...noLut } = buffers;
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, problem, noLut, encode))).toBe('lut');
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, problem, { ...buffers, validBlockNum: { ptr: 0x100n, bytes: 4 } }, encode))).toBe(
      'validBlockNum',
    );
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, problem, { ...buffers, pvThreshold: { ptr: 0x100n, bytes: 8 } }, encode))).toBe(
      'pvThreshold',
    );
    expect(
      argumentOf(() =>
        prepareSpargeFwdLaunch(vsa, problem, { ...buffers, q: { ptr: buffers.q.ptr + 2n, bytes: buffers.q.bytes } }, encode),
      ),
    ).toBe('q');
    const jenga = find('jenga', false, false);
    expect(
      argumentOf(() =>
        prepareSpargeFwdLaunch(jenga, { ...problem, pipeline: 'jenga' }, { ...buffers, blockMap: { ptr: 0x100n, bytes: 3 } }, encode),
      ),
    ).toBe('blockMap');
    const int8 = find('vsa', false, true);
    expect(argumentOf(() => prepareSpargeFwdLaunch(int8, problem, { ...buffers, kScale: { ptr: 0x100n, bytes: 4 } }, encode))).toBe(
      'kScale',
    );
    expect(argumentOf(() => prepareSpargeFwdLaunch(int8, problem, { ...buffers, q8: { ptr: 0x101n, bytes: 1 << 30 } }, encode))).toBe('q8');
    expect(argumentOf(() => prepareSpargeFwdLaunch(vsa, { ...problem, pvMode: 'warp' }, buffers, encode))).toBe('problem');
    // Every problem at once, in one error, in the order checked.
    let all: ArgumentError | undefined;
    try {
      prepareSpargeFwdLaunch(
        int8,
        { ...problem, qBlocks: 7 },
        {
          ...noLut,
          q: { ptr: buffers.q.ptr + 2n, bytes: buffers.q.bytes },
          kScale: { ptr: 0x100n, bytes: 4 },
          q8: { ptr: 0x101n, bytes: 1 << 30 },
        },
        encode,
      );
    } catch (e) {
      all = e as ArgumentError;
    }
    expect(all?.problems.map((x) => x.argument)).toEqual(['qBlocks', 'q', 'lut', 'q8', 'kScale']);
  });
});

describe('spargeFwdUnsupported', () => {
  it('lists every reason an instance cannot run a problem', () => {
    const { problem } = setup();
    const vsa = find('vsa', false, false);
    expect(spargeFwdUnsupported(vsa, problem)).toEqual([]);
    expect(spargeFwdUnsupported(vsa, { ...problem, pipeline: 'jenga' }).join()).toMatch(/pipeline jenga/);
    expect(spargeFwdUnsupported(vsa, { ...problem, pvMode: 'block' }).join()).toMatch(/no PV-skip vote/);
    expect(spargeFwdUnsupported(find('vsa', false, false, 'window'), { ...problem, mask: slidingWindowMask(16, 0) }).join()).toMatch(
      /top-left causal/,
    );
    expect(spargeFwdUnsupported(find('vsa', false, false, 'window'), { ...problem, mask: causalTopLeft })).toEqual([]);
    expect(spargeFwdUnsupported(find('jenga', false, false), { ...problem, pipeline: 'jenga', kBlocks: 4096 }).join()).toMatch(
      /at most 2048/,
    );
  });
});
