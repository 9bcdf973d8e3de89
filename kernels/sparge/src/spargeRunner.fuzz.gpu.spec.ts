// GPU replay of Sparge's invalid-argument fuzz (issue 17 item 4): for the runner, the block map and
// the sparse attention launcher, 100 seeded invalid argument sets each (the CI fuzz's generators,
// restricted to vsa fp16 d128 without mask, PV skip or int8: one attention instance and the d128
// block-map kernels run them all) through the real addon on device 0 — each a typed ArgumentError
// before any launch — then one valid sparse attention checked against the CPU reference (the
// context is still usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Device, encodeTensorMapTiled, type Compiler } from '@tilekit/runtime';
import {
  countingCompiler,
  fuzzLine,
  gpu,
  gpuTestCompiler,
  type InvalidCall,
  materialize,
  replayInvalidCalls,
} from '@tilekit/runtime/testing';
import { SpargeFwdKernel, type SpargeFwdBuffers, type SpargeFwdLaunchProblem } from './attention/spargeFwdLauncher.ts';
import { SpargeBlockMapKernels, type SpargeBlockMapBuffers, type SpargeBlockMapProblem } from './blockMap/spargeBlockMapKernels.ts';
import { planSparge, SpargeRunner, type SpargeBuffers, type SpargeProblem } from './spargeRunner.ts';
import { invalidSpargeCalls, type SpargeFuzzCall, type SpargeFuzzOptions, type SpargeFuzzTarget } from './testing/invalidSpargeArgs.ts';
import { runSpargeFwdGpuCase } from './testing/spargeFwdGpuCase.ts';

const SEED = 0x17_04_05;
const SETS = 100;
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'lse', 'seqstartQ', 'seqstartK'];
const BASE = {
  dtypes: ['fp16'],
  hdims: [128],
  pipelines: ['vsa'],
  pvModes: ['none'],
  int8: [false],
  causal: [false],
} as const satisfies Omit<SpargeFuzzOptions, 'target'>;
const VALID: SpargeProblem = { dtype: 'fp16', batch: 1, nheadQ: 2, hdimQ: 128, seqlenQ: 259, seqlenK: 259, params: { topk: 0.5 } };

const counter = { compiles: 0 };

/** nvcc (through the spec's cache), counting compile requests. */
const countingNvcc = (): Compiler => countingCompiler(gpuTestCompiler('sparge-fuzz'), counter);

/** Replays `SETS` seeded invalid calls of `target` through `call`, each a typed error before any launch. */
async function replay(
  t: { diagnostic(message: string): void },
  target: SpargeFuzzTarget,
  call: (c: SpargeFuzzCall, ranges: Record<string, unknown>, targets: readonly string[]) => Promise<void>,
): Promise<void> {
  const device = Device.open(0);
  const sets: InvalidCall<SpargeFuzzCall>[] = fc.sample(invalidSpargeCalls({ target, ...BASE }), { numRuns: SETS, seed: SEED });
  const tally = await replayInvalidCalls({
    device,
    sets,
    compiles: () => counter.compiles,
    rules: { checkedAfterBuild: target === 'runner' ? RUN_BUFFERS : [] },
    call: (set, ranges) => call(set.call, ranges, set.targets),
  });
  t.diagnostic(fuzzLine(`sparge ${target} (GPU)`, tally));
  assert.equal(tally.typed, SETS);
}

test(
  'sparge/gpu fuzz: invalid argument sets of the runner, block map and attention launcher ' +
    'are typed errors before any launch; then a valid sparse attention is correct',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    const compiler = countingNvcc();
    const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);
    const instance = planSparge(VALID).instance;
    const attention = await SpargeFwdKernel.build(instance, { device, compiler });
    const blockMaps = await SpargeBlockMapKernels.build({ device, compiler, headDims: [128] });
    // The warm runner: its kernels are built by one valid prepare (nothing launched).
    const runner = new SpargeRunner({ device, compiler });
    const warm = materialize(device, {
      q: { kind: 'alloc', bytes: 1 << 20, offset: 0 },
      k: { kind: 'alloc', bytes: 1 << 20, offset: 0 },
      v: { kind: 'alloc', bytes: 1 << 20, offset: 0 },
      o: { kind: 'alloc', bytes: 1 << 20, offset: 0 },
    });
    (await runner.prepare(VALID, warm.ranges as unknown as SpargeBuffers)).dispose();
    warm.dispose();
    await replay(t, 'runner', async (c, r, targets) => {
      const fresh = targets.some((x) => !RUN_BUFFERS.includes(x));
      const prepared = await (fresh ? new SpargeRunner({ device, compiler }) : runner).prepare(
        c.problem as unknown as SpargeProblem,
        r as unknown as SpargeBuffers,
      );
      prepared.launch();
      prepared.dispose();
    });
    await replay(t, 'blockMap', async (c, r) => {
      const prepared = blockMaps.prepare(c.problem as unknown as SpargeBlockMapProblem, r as unknown as SpargeBlockMapBuffers);
      prepared.launch();
      prepared.dispose();
    });
    await replay(t, 'attention', async (c, r) => {
      const p: SpargeFwdLaunchProblem = { ...planSparge(c.problem as unknown as SpargeProblem).attention, ...c.patch };
      attention.prepare(p, r as unknown as SpargeFwdBuffers, encode).launch();
    });
    const result = await runSpargeFwdGpuCase(
      {
        label: 'vsa fp16 d128 b1 h2 s259 density 0.5',
        dtype: 'fp16',
        d: 128,
        batch: 1,
        h: 2,
        s: 259,
        causal: false,
        pipeline: 'vsa',
        pvMode: 'none',
        pvThreshold: Infinity,
        density: 0.5,
      },
      attention,
    );
    t.diagnostic(result.summary);
    attention.dispose();
    blockMaps.dispose();
  },
);
