// GPU replay of the attention-forward invalid-argument fuzz (issue 17 item 4): for the sm_90a
// launcher, the runner, the sm_80 launcher and the split-KV combine launcher, 100 seeded invalid
// argument sets each (the CI fuzz's generators, restricted to the few instances compiled here)
// through the real addon on device 0 — each a typed ArgumentError before any launch — then one valid
// forward on the sm_90a and on the sm_80 kernel, checked against the CPU reference (the context is
// still usable).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { sm90a } from '@tilekit/codegen';
import { noMask, checkFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { Device, encodeTensorMapTiled, type Compiler } from '@tilekit/runtime';
import { countingCompiler, fuzzLine, gpu, gpuTestCompiler, type InvalidCall, replayInvalidCalls } from '@tilekit/runtime/testing';
import { FmhaFwdCombineKernel, type FmhaFwdCombineBuffers } from './fmhaFwdCombineLauncher.ts';
import { selectFmhaFwdCombineInstance, selectFmhaFwdInstance } from './fmhaFwdDispatch.ts';
import type { FmhaFwdBuffers, FmhaFwdRunnerBuffers } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { FmhaFwdRunner } from './fmhaFwdRunner.ts';
import { fmhaFwdSm80CatalogFor } from './sm80/fmhaFwdSm80Catalog.ts';
import { FmhaFwdSm80Kernel } from './sm80/fmhaFwdSm80Launcher.ts';
import { runFmhaFwdGpuCase, type FmhaFwdGpuCase } from '@tilekit/fmha-launch/testing';
import {
  invalidFmhaFwdCalls,
  type FmhaFwdFuzzCall,
  type FmhaFwdFuzzOptions,
  type FmhaFwdFuzzTarget,
} from './testing/invalidFmhaFwdArgs.ts';

const SEED = 0x17_04_03;
const SETS = 100;
/** The bases: fp16, d128, no mask (one sm_90a, one sm_80 and one combine instance run them all). */
const BASE = { dtypes: ['fp16'], hdims: [{ hdimQ: 128, hdimV: 128 }], masks: ['0'] } as const satisfies Omit<FmhaFwdFuzzOptions, 'target'>;
const VALID: FmhaFwdGpuCase = {
  label: 'fp16 d128 no mask, b2 h2 s259, bhsd',
  dtype: 'fp16',
  d: 128,
  batch: 2,
  h: 2,
  sq: 259,
  sk: 259,
  layout: 'bhsd',
  mask: noMask,
};
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'lse', 'seqstartQ', 'seqstartK', 'seqlenK'];

const counter = { compiles: 0 };

/** nvcc (through the spec's cache), counting compile requests. */
const countingNvcc = (): Compiler => countingCompiler(gpuTestCompiler('fmha-fwd-fuzz'), counter);

/** Replays `SETS` seeded invalid calls of `target` through `call`, each a typed error before any launch. */
async function replay(
  t: { diagnostic(message: string): void },
  target: FmhaFwdFuzzTarget,
  options: Omit<FmhaFwdFuzzOptions, 'target'>,
  call: (c: FmhaFwdFuzzCall, ranges: Record<string, unknown>) => unknown,
): Promise<void> {
  const device = Device.open(0);
  const sets: InvalidCall<FmhaFwdFuzzCall>[] = fc.sample(invalidFmhaFwdCalls({ target, ...options }), { numRuns: SETS, seed: SEED });
  const tally = await replayInvalidCalls({
    device,
    sets,
    compiles: () => counter.compiles,
    rules: { checkedAfterBuild: target === 'runner' ? RUN_BUFFERS : [] },
    call: (set, ranges) => call(set.call, ranges),
  });
  t.diagnostic(fuzzLine(`fmha-fwd ${target} (GPU)`, tally));
  assert.equal(tally.typed, SETS);
}

test(
  'fmha-fwd/gpu fuzz: invalid argument sets of every launcher are typed errors before any launch; then valid forwards are correct',
  gpu.options,
  async (t) => {
    const device = Device.open(0);
    const compiler = countingNvcc();
    const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);
    const one = checkFmhaFwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 1, hdimQ: 128, seqlenQ: 64, seqlenK: 64, splitKv: 2 });
    const main = await FmhaFwdKernel.build(selectFmhaFwdInstance({ ...one, numSplits: 1 }), { device, compiler });
    const sm80Instance = fmhaFwdSm80CatalogFor(sm90a).find(
      (i) => i.policy.dtype === 'fp16' && i.policy.headDim === 128 && i.policy.mask === 'none',
    )!;
    const sm80 = await FmhaFwdSm80Kernel.build(sm80Instance, { device, compiler });
    const combine = await FmhaFwdCombineKernel.build(selectFmhaFwdCombineInstance(one), { device, compiler });
    const build = (i: { readonly name: string }) =>
      i.name === main.instance.name ? Promise.resolve(main) : Promise.reject(new Error(`fuzz replay: ${i.name} was not built`));
    await replay(t, 'launcher', { ...BASE, splits: [1], instance: main.instance.name }, (c, r) =>
      main.prepare(checkFmhaFwdProblem(c.problem as unknown as FmhaFwdProblem), r as unknown as FmhaFwdBuffers, encode).launch(),
    );
    await replay(t, 'runner', { ...BASE, splits: [1] }, async (c, r) => {
      const runner = await FmhaFwdRunner.create(c.problem as unknown as FmhaFwdProblem, { device, compiler, buildKernel: build, encode });
      try {
        runner.run(r as unknown as FmhaFwdRunnerBuffers);
      } finally {
        runner.dispose();
      }
    });
    await replay(t, 'sm80', { ...BASE, instance: sm80.instance.name }, (c, r) =>
      sm80.prepare(checkFmhaFwdProblem(c.problem as unknown as FmhaFwdProblem), r as unknown as FmhaFwdBuffers).launch(),
    );
    await replay(t, 'combine', { ...BASE, instance: combine.instance.name }, (c, r) =>
      combine.prepare(checkFmhaFwdProblem(c.problem as unknown as FmhaFwdProblem), r as unknown as FmhaFwdCombineBuffers).launch(),
    );
    t.diagnostic(await runFmhaFwdGpuCase(VALID, { name: main.instance.name, launch: (p, b) => main.prepare(p, b, encode).launch() }));
    t.diagnostic(await runFmhaFwdGpuCase(VALID, { name: sm80.instance.name, launch: (p, b) => sm80.prepare(p, b).launch() }));
    for (const k of [main, sm80, combine]) k.dispose();
  },
);
