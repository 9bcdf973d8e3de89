// Group mode where every query or every key sequence is empty (0 physical rows): a valid problem,
// which the runner must prepare and launch without a launch-time error. The kernels never touch a
// 0-row tensor (a block whose query tile lies past its sequence returns before any TMA load; with no
// keys k_iters is 0 and the epilogue writes O = 0, LSE = −∞), so its TMA map is a placeholder.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import { groupModeForwardBytes } from '@tilekit/fmha/testing';
import { checkTiledTensorMap, Device, type Compiler } from '@tilekit/runtime';
import {
  dropFuzzFakeAddon,
  fakeCompiler,
  OwnedBuffers,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
} from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FmhaFwdCombineKernel } from './fmhaFwdCombineLauncher.ts';
import { fmhaFwdTensorMaps } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { checkFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { FmhaFwdRunner, planFmhaFwd } from './fmhaFwdRunner.ts';

/** The failing cases of the randomized GPU spec (TILEKIT_RANDOM_FMHA_FWD_CASE), verbatim. */
const ALL_KEYS_EMPTY: FmhaFwdProblem = {
  dtype: 'fp16',
  batch: 1,
  nheadQ: 8,
  nheadK: 2,
  hdimQ: 192,
  hdimV: 128,
  seqstartQ: [0, 64],
  seqstartK: [0, 0],
  inputLayout: 'bhsd',
  outputLayout: 'bhsd',
  mask: { kind: 'window', alignment: 'topLeft', left: -1, right: 0 },
  lse: true,
  splitKv: 1,
};
const ALL_QUERIES_EMPTY: FmhaFwdProblem = {
  dtype: 'fp16',
  batch: 1,
  nheadQ: 3,
  nheadK: 1,
  hdimQ: 64,
  hdimV: 64,
  seqstartQ: [0, 0],
  seqstartK: [0, 2],
  inputLayout: 'bhsd',
  outputLayout: 'bshd',
  mask: { kind: 'window', alignment: 'topLeft', left: -1, right: 0 },
  lse: true,
  splitKv: 1,
};
const CASES: readonly [string, FmhaFwdProblem][] = [
  ['all key sequences empty', ALL_KEYS_EMPTY],
  ['all query sequences empty', ALL_QUERIES_EMPTY],
  ['all key sequences empty, split-KV', { ...ALL_KEYS_EMPTY, splitKv: 3 }],
  ['all query sequences empty, split-KV', { ...ALL_QUERIES_EMPTY, splitKv: 2 }],
  ['batch 2, all keys empty, bshd', { ...ALL_KEYS_EMPTY, batch: 2, seqstartQ: [0, 64, 65], seqstartK: [0, 0, 0], inputLayout: 'bshd' }],
  [
    'batch 3, all queries empty, auto splits',
    { ...ALL_QUERIES_EMPTY, batch: 3, seqstartQ: [0, 0, 0, 0], seqstartK: [0, 2, 2, 300], splitKv: 'auto' },
  ],
];

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

describe('fmha fwd with every query or every key sequence empty (group mode)', () => {
  it.each(CASES)('%s: the TMA maps of 0-row tensors are valid placeholders', (_what, problem) => {
    const plan = planFmhaFwd(problem);
    const p = plan.problem;
    const maps = fmhaFwdTensorMaps(plan.instance, p, 0x7f0000000000n, 0x7f0000100000n, 0x7f0000200000n);
    for (const m of [maps.q, maps.k, maps.v]) expect(() => checkTiledTensorMap(m)).not.toThrow();
    const rows = { q: p.rowsQ, k: p.rowsK, v: p.rowsK };
    for (const name of ['q', 'k', 'v'] as const) {
      if (rows[name] === 0) expect(maps[name].globalDims.slice(1)).toEqual([1, 1, 1]);
    }
  });

  it.each(CASES)('%s: the runner prepares and launches without error', async (_what, problem) => {
    const p = checkFmhaFwdProblem(problem);
    const runner = await FmhaFwdRunner.create(p, {
      device,
      compiler,
      buildKernel: (i) => FmhaFwdKernel.build(stub(i), { device, compiler }),
      buildCombine: (i) => FmhaFwdCombineKernel.build(stub(i), { device, compiler }),
    });
    const inputs = groupModeForwardBytes(p);
    const outputs = inputs;
    const owned = new OwnedBuffers(device);
    const before = fake.launches.length;
    try {
      const launch = runner.prepare({
        q: owned.alloc(inputs.q),
        k: owned.alloc(inputs.k),
        v: owned.alloc(inputs.v),
        o: owned.alloc(outputs.o),
        lse: owned.alloc(outputs.lse),
        seqstartQ: owned.int32(p.seqstartQ!),
        seqstartK: owned.int32(p.seqstartK!),
      });
      launch.launch();
      const launches = fake.launches.slice(before);
      expect(launches.map((l) => l.kernel)).toEqual(runner.instances.map((i) => i.name));
      for (const l of launches) expect(Math.min(...l.grid)).toBeGreaterThan(0);
    } finally {
      runner.dispose();
      owned.dispose();
    }
  });
});
