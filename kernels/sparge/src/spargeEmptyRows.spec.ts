// Group mode where every query or every key sequence is empty (0 physical rows), through the
// SpargeRunner with the fake addon: a valid problem that must prepare and launch without an error.
// The intermediates the runner allocates hold what both block-map launches require (one size
// function, `spargePoolOutputBytes`, whose padded block grid is the selection's).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import { groupModeForwardBytes } from '@tilekit/fmha/testing';
import { Device, type Compiler } from '@tilekit/runtime';
import { dropFuzzFakeAddon, fakeCompiler, OwnedBuffers, useFuzzFakeAddon, type FuzzFakeAddon } from '@tilekit/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSpargePoolProblem, spargePoolOutputBytes } from './blockMap/spargePoolProblem.ts';
import { checkSpargeSelectConfig, spargeSelectBufferBytes } from './blockMap/spargeSelectLauncher.ts';
import { planSparge, SpargeRunner, type SpargeProblem } from './spargeRunner.ts';

const base = {
  dtype: 'fp16',
  batch: 1,
  nheadQ: 8,
  nheadK: 2,
  hdimQ: 64,
  inputLayout: 'bhsd',
  outputLayout: 'bhsd',
  params: { topk: 0.5 },
  pipeline: 'jenga',
  pvMode: 'warp',
} as const;
const CASES: readonly [string, SpargeProblem][] = [
  ['all key sequences empty (jenga, warp vote)', { ...base, seqstartQ: [0, 64], seqstartK: [0, 0] }],
  ['all query sequences empty (jenga, warp vote)', { ...base, seqstartQ: [0, 0], seqstartK: [0, 64] }],
  ['batch 2, all key sequences empty', { ...base, batch: 2, seqstartQ: [0, 64, 200], seqstartK: [0, 0, 0] }],
  [
    'batch 2, all query sequences empty, vsa causal',
    {
      ...base,
      batch: 2,
      seqstartQ: [0, 0, 0],
      seqstartK: [0, 64, 300],
      pipeline: 'vsa',
      pvMode: 'none',
      params: { topk: 0.5, isCausal: true },
    },
  ],
  ['all sequences empty', { ...base, seqstartQ: [0, 0], seqstartK: [0, 0] }],
];
/**
 * int8 Q·Kᵀ: the block map now prepares (its scales come from `spargePooledBytes` too), but the
 * attention launcher's own int8 TMA map of a 0-row Q8/K8 still has a 0 head stride
 * (spargeFwdLauncher.ts `int8Map`, outside this change): expected to fail until that map gets the
 * same placeholder as `fmhaFwdTensorMaps` ([d, 1, 1, 1], the row stride everywhere).
 */
const INT8_CASES: readonly [string, SpargeProblem][] = [
  [
    'all key sequences empty, int8, d128, bshd',
    { ...base, hdimQ: 128, inputLayout: 'bshd', seqstartQ: [0, 64], seqstartK: [0, 0], params: { topk: 0.5, int8: true } },
  ],
  ['all query sequences empty, int8, cdf', { ...base, seqstartQ: [0, 0], seqstartK: [0, 130], params: { cdfthreshd: 0.9, int8: true } }],
];

// The fake driver behind the shim that `@tilekit/runtime/testing/fuzzAddonPath` (imported first)
// points $TILEKIT_ADDON_PATH at, and a compiler that compiles nothing.
const fake: FuzzFakeAddon = useFuzzFakeAddon();
const compiler: Compiler = fakeCompiler(fake, { compiles: 0 });
let device: Device;

beforeAll(() => {
  device = Device.open(0);
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

describe('Sparge with every query or every key sequence empty (group mode)', () => {
  it.each([...CASES, ...INT8_CASES])('%s: the pool outputs hold what the selection requires', (_what, problem) => {
    const plan = planSparge(problem);
    const p = plan.attention;
    const shape = { batch: p.batch, nhead: p.nheadQ, nheadK: p.nheadK, headDim: p.hdimQ, seqstartQ: p.seqstartQ!, seqstartK: p.seqstartK! };
    const pool = spargePoolOutputBytes(
      checkSpargePoolProblem({
        ...shape,
        dtype: p.dtype,
        blockQ: 128,
        blockK: 128,
        smoothK: plan.params.smoothK,
        int8: plan.params.int8,
        tailBlockRule: plan.params.tailBlockRule,
      }),
    );
    const select = spargeSelectBufferBytes(
      checkSpargeSelectConfig({
        ...shape,
        blockQ: 128,
        blockK: 128,
        selection: plan.params.selection,
        isCausal: plan.params.isCausal,
        attentionSink: plan.params.attentionSink,
      }),
    );
    for (const key of ['pooledQ', 'simQ', 'pooledK', 'simK'] as const) expect(pool[key]).toBe(select[key]);
  });

  it.each(CASES)('%s: the runner prepares and launches without error', (_what, problem) => runEmpty(problem));
  it.each(INT8_CASES)('%s: the runner prepares and launches (int8: a one-row placeholder map)', (_what, problem) => runEmpty(problem));
});

async function runEmpty(problem: SpargeProblem): Promise<void> {
  {
    const plan = planSparge(problem);
    const p = plan.attention;
    const runner = new SpargeRunner({ device, compiler });
    const inputs = groupModeForwardBytes(p);
    const outputs = inputs;
    const owned = new OwnedBuffers(device);
    const before = fake.launches.length;
    const prepared = await runner.prepare(problem, {
      q: owned.alloc(inputs.q),
      k: owned.alloc(inputs.k),
      v: owned.alloc(inputs.v),
      o: owned.alloc(outputs.o),
      ...(p.lse ? { lse: owned.alloc(outputs.lse) } : {}),
      seqstartQ: owned.int32(p.seqstartQ!),
      seqstartK: owned.int32(p.seqstartK!),
    });
    try {
      prepared.launch();
      const launches = fake.launches.slice(before);
      expect(launches.at(-1)?.kernel).toBe(plan.instance.name);
      for (const l of launches) expect(Math.min(...l.grid)).toBeGreaterThan(0);
    } finally {
      prepared.dispose();
      owned.dispose();
    }
  }
}
