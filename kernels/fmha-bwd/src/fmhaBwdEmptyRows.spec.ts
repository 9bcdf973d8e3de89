// The backward runner with the fake addon. Group mode where every query or every key sequence is
// empty (0 physical rows): a valid problem that must prepare and launch without a launch-time error.
// A 0-row tensor's TMA map is a placeholder (the kernels never load from it); a stage whose grid
// would have no blocks is not launched (nothing to compute), and dQ / dK / dV
// still end up zero: dq_acc is zeroed by the workspace preparation and convert_dq still runs. And a
// prepared backward packs each stage once: `prepare` packs (and validates) dot_do_o, dq_dk_dv with its
// TMA maps and convert_dq, every `launch` after it reuses those packed launches, a second `prepare`
// packs again (a counting TMA encoder).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import { checkTiledTensorMap, Device, type Compiler, type TiledTensorMapOptions } from '@tilekit/runtime';
import {
  dropFuzzFakeAddon,
  fakeCompiler,
  OwnedBuffers,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
} from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFmhaBwdProblem, fmhaBwdOperandElements, type FmhaBwdProblem } from '@tilekit/fmha';
import {
  FmhaBwdKernel,
  FmhaBwdRunner,
  packFmhaBwdConvertDq,
  packFmhaBwdDotDoO,
  packFmhaBwdDqDkDv,
  type FmhaBwdKernelInstance,
} from './fmhaBwdRunner.ts';

/** The shapes of the failing randomized cases (TILEKIT_RANDOM_FMHA_BWD_CASE), with the backward's head dims. */
const MASK = { kind: 'window', alignment: 'topLeft', left: -1, right: 0 } as const;
const ALL_KEYS_EMPTY: FmhaBwdProblem = {
  dtype: 'fp16',
  batch: 1,
  nheadQ: 8,
  nheadK: 2,
  hdimQ: 128,
  seqstartQ: [0, 64],
  seqstartK: [0, 0],
  inputLayout: 'bhsd',
  outputLayout: 'bhsd',
  mask: MASK,
  deterministic: true,
};
const ALL_QUERIES_EMPTY: FmhaBwdProblem = {
  dtype: 'fp16',
  batch: 1,
  nheadQ: 3,
  nheadK: 1,
  hdimQ: 64,
  seqstartQ: [0, 0],
  seqstartK: [0, 2],
  inputLayout: 'bhsd',
  outputLayout: 'bshd',
  mask: MASK,
  deterministic: true,
};
const CASES: readonly [string, FmhaBwdProblem][] = [
  ['all key sequences empty, deterministic', ALL_KEYS_EMPTY],
  ['all query sequences empty, deterministic', ALL_QUERIES_EMPTY],
  ['all key sequences empty, atomic', { ...ALL_KEYS_EMPTY, deterministic: false }],
  ['all query sequences empty, atomic', { ...ALL_QUERIES_EMPTY, deterministic: false }],
  ['all key sequences empty, d64 bshd', { ...ALL_KEYS_EMPTY, hdimQ: 64, inputLayout: 'bshd' }],
  ['all query sequences empty, d128', { ...ALL_QUERIES_EMPTY, hdimQ: 128 }],
  [
    'all key sequences empty, d256 atomic, batch 2',
    { ...ALL_KEYS_EMPTY, hdimQ: 256, deterministic: false, batch: 2, seqstartQ: [0, 64, 100], seqstartK: [0, 0, 0] },
  ],
  [
    'all query sequences empty, d256 atomic, batch 3',
    { ...ALL_QUERIES_EMPTY, hdimQ: 256, deterministic: false, batch: 3, seqstartQ: [0, 0, 0, 0], seqstartK: [0, 2, 130, 130] },
  ],
];

/** A batch-mode problem for the packing check. */
const PACKED: FmhaBwdProblem = { dtype: 'bf16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 128, seqlenQ: 300, seqlenK: 259, mask: 't' };

// The fake driver behind the shim that `@tilekit/runtime/testing/fuzzAddonPath` (imported first)
// points $TILEKIT_ADDON_PATH at; a compiler that compiles nothing; instances whose source is a stub.
const fake: FuzzFakeAddon = useFuzzFakeAddon();
const compiler: Compiler = fakeCompiler(fake, { compiles: 0 });
const stub = withoutSource;
let device: Device;

beforeAll(() => {
  device = Device.open(0);
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

describe('fmha bwd with every query or every key sequence empty (group mode)', () => {
  it.each(CASES)('%s: the runner prepares and launches without error', async (_what, problem) => {
    const p = checkFmhaBwdProblem(problem);
    const buildKernel = <I extends FmhaBwdKernelInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
      FmhaBwdKernel.build(stub(i), { device, compiler });
    const runner = await FmhaBwdRunner.create(p, { device, compiler, buildKernel });
    const e = 2;
    const elems = fmhaBwdOperandElements(p);
    const owned = new OwnedBuffers(device);
    const before = fake.launches.length;
    try {
      const buffers = {
        q: owned.alloc(elems.q * e),
        k: owned.alloc(elems.k * e),
        v: owned.alloc(elems.v * e),
        o: owned.alloc(elems.o * e),
        dO: owned.alloc(elems.dO * e),
        lse: owned.alloc(elems.lse * 4),
        dQ: owned.alloc(elems.dQ * e),
        dK: owned.alloc(elems.dK * e),
        dV: owned.alloc(elems.dV * e),
        seqstartQ: owned.int32(p.seqstartQ),
        seqstartK: owned.int32(p.seqstartK),
      };
      const prepared = runner.prepare(buffers);
      // Every stage packs (valid TMA maps included) whether or not it launches.
      const t = runner.launcher.traits;
      const k = runner.kernels;
      const packs = [
        packFmhaBwdDotDoO(k.dotDoO.instance, t, prepared.args),
        packFmhaBwdDqDkDv(k.dqDkDv.instance, t, runner.workspaceLayout, prepared.args, (m) => {
          checkTiledTensorMap(m);
          return new Uint8Array(128);
        }),
        ...(k.convertDq ? [packFmhaBwdConvertDq(k.convertDq.instance, t, prepared.args)] : []),
      ];
      prepared.launch();
      const launches = fake.launches.slice(before);
      // The stages with blocks are launched, in order; none with an empty grid.
      const expected = runner.instances.filter((_, i) => Math.min(...packs[i]!.grid) > 0).map((i) => i.name);
      expect(launches.map((l) => l.kernel)).toEqual(expected);
      for (const l of launches) expect(Math.min(...l.grid)).toBeGreaterThan(0);
      // dQ is written by convert_dq (from a zeroed dq_acc when no key tile adds to it); dK/dV by dq_dk_dv.
      if (p.rowsQ > 0 && k.convertDq) expect(launches.map((l) => l.kernel)).toContain(k.convertDq.instance.name);
      if (p.rowsK > 0) expect(launches.map((l) => l.kernel)).toContain(k.dqDkDv.instance.name);
    } finally {
      runner.dispose();
      owned.dispose();
    }
  });
});

describe('fmha bwd runner: packed launches', () => {
  it('prepare packs every stage once (4 TMA maps); each launch reuses them; another prepare packs again', async () => {
    const p = checkFmhaBwdProblem(PACKED);
    const maps: TiledTensorMapOptions[] = [];
    const encode = (m: TiledTensorMapOptions): Uint8Array => (checkTiledTensorMap(m), maps.push(m), new Uint8Array(128));
    const buildKernel = <I extends FmhaBwdKernelInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
      FmhaBwdKernel.build(stub(i), { device, compiler });
    const runner = await FmhaBwdRunner.create(p, { device, compiler, buildKernel, encode });
    const owned = new OwnedBuffers(device);
    try {
      const elems = fmhaBwdOperandElements(p);
      const alloc = (n: number, e = 2) => owned.alloc(Math.max(1, n) * e);
      const buffers = {
        q: alloc(elems.q),
        k: alloc(elems.k),
        v: alloc(elems.v),
        o: alloc(elems.o),
        dO: alloc(elems.dO),
        lse: alloc(elems.lse, 4),
        dQ: alloc(elems.dQ),
        dK: alloc(elems.dK),
        dV: alloc(elems.dV),
      };
      const prepared = runner.prepare(buffers);
      expect(maps).toHaveLength(4);
      expect(Object.isFrozen(prepared.args) && Object.isFrozen(prepared.args.q)).toBe(true);
      const before = fake.launches.length;
      for (let i = 0; i < 3; i++) prepared.launch();
      expect(maps).toHaveLength(4);
      const launched = fake.launches.slice(before).map((l) => l.kernel);
      expect(launched).toEqual([0, 1, 2].flatMap(() => runner.instances.map((i) => i.name)));
      runner.prepare(buffers).launch();
      expect(maps).toHaveLength(8);
    } finally {
      runner.dispose();
      owned.dispose();
    }
  });
});
