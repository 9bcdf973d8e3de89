// Fuzzed invalid arguments of the attention-forward launchers (issue 17 item 4), on the fake addon:
// 1000 random invalid argument sets each through the runner (`FmhaFwdRunner.create` + `run`, with
// split-KV and the combine), the sm_90a launcher (`FmhaFwdKernel.prepare`, one-pass and split
// instances), the sm_80 launcher and the split-KV combine launcher. Every one must be a typed
// ArgumentError naming an argument and a rule, with no launch, and no compile for a rejected problem.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { buildOncePerInstance, Device, encodeTensorMapTiled } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { FmhaFwdCombineKernel, type FmhaFwdCombineBuffers } from './fmhaFwdCombineLauncher.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import type { FmhaFwdBuffers, FmhaFwdRunnerBuffers } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { checkFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { FmhaFwdRunner } from './fmhaFwdRunner.ts';
import type { FmhaFwdSm80Instance } from './sm80/fmhaFwdSm80Instance.ts';
import { FmhaFwdSm80Kernel } from './sm80/fmhaFwdSm80Launcher.ts';
import {
  dropFuzzFakeAddon,
  expectRejected,
  fakeCompiler,
  fuzzLine,
  materialize,
  newTally,
  useFuzzFakeAddon,
  withoutSource,
  type FuzzFakeAddon,
} from '@tilekit/runtime/testing';
import {
  fmhaFwdFuzzInstance,
  invalidFmhaFwdCalls,
  validFmhaFwdCalls,
  type FmhaFwdFuzzCall,
  type FmhaFwdFuzzTarget,
} from './testing/invalidFmhaFwdArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x17_04_03;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
/** The runner builds its kernels for a valid problem before it sees the buffers: a call rejected only for these may have compiled. */
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'lse', 'seqstartQ', 'seqstartK', 'seqlenK'];
let kernels: {
  main: (i: FmhaFwdInstance) => Promise<FmhaFwdKernel>;
  combine: (i: FmhaFwdCombineInstance) => Promise<FmhaFwdCombineKernel>;
  sm80: (i: FmhaFwdSm80Instance) => Promise<FmhaFwdSm80Kernel>;
};

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  kernels = {
    main: buildOncePerInstance((i: FmhaFwdInstance) => FmhaFwdKernel.build(withoutSource(i), { device, compiler })),
    combine: buildOncePerInstance((i: FmhaFwdCombineInstance) => FmhaFwdCombineKernel.build(withoutSource(i), { device, compiler })),
    sm80: buildOncePerInstance((i: FmhaFwdSm80Instance) => FmhaFwdSm80Kernel.build(withoutSource(i), { device, compiler })),
  };
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);

/** The kernel a launcher call runs, built beforehand (building is not under test). */
async function warm(target: FmhaFwdFuzzTarget, call: FmhaFwdFuzzCall): Promise<void> {
  if (target === 'runner') return;
  const instance = fmhaFwdFuzzInstance(call.instance);
  if (target === 'launcher') await kernels.main(instance as unknown as FmhaFwdInstance);
  else if (target === 'combine') await kernels.combine(instance as unknown as FmhaFwdCombineInstance);
  else await kernels.sm80(instance as unknown as FmhaFwdSm80Instance);
}

/**
 * The runner: plan and build, then run with the buffers. Its kernels are built afresh each time (no
 * source emitted: cheap), so a rejected problem that reached a build would show as a compile.
 */
async function runRunner(call: FmhaFwdFuzzCall, ranges: Record<string, unknown>): Promise<void> {
  const compiler = fakeCompiler(fake, counter);
  const runner = await FmhaFwdRunner.create(call.problem as unknown as FmhaFwdProblem, {
    device,
    compiler,
    buildKernel: (i) => FmhaFwdKernel.build(withoutSource(i), { device, compiler }),
    buildCombine: (i) => FmhaFwdCombineKernel.build(withoutSource(i), { device, compiler }),
    encode,
  });
  try {
    runner.run(ranges as unknown as FmhaFwdRunnerBuffers);
  } finally {
    runner.dispose();
  }
}

/** One call through `target`'s public entry point. */
async function run(target: FmhaFwdFuzzTarget, call: FmhaFwdFuzzCall): Promise<void> {
  const buffers = materialize(device, call.buffers);
  try {
    if (target === 'runner') return await runRunner(call, buffers.ranges);
    const p = checkFmhaFwdProblem(call.problem as unknown as FmhaFwdProblem);
    const instance = fmhaFwdFuzzInstance(call.instance);
    if (target === 'launcher')
      (await kernels.main(instance as unknown as FmhaFwdInstance)).prepare(p, buffers.ranges as unknown as FmhaFwdBuffers, encode).launch();
    else if (target === 'combine')
      (await kernels.combine(instance as unknown as FmhaFwdCombineInstance))
        .prepare(p, buffers.ranges as unknown as FmhaFwdCombineBuffers)
        .launch();
    else (await kernels.sm80(instance as unknown as FmhaFwdSm80Instance)).prepare(p, buffers.ranges as unknown as FmhaFwdBuffers).launch();
  } finally {
    buffers.dispose();
  }
}

describe.each(['runner', 'launcher', 'sm80', 'combine'] as const)('fmha-fwd %s: fuzzed invalid arguments', (target: FmhaFwdFuzzTarget) => {
  it('the valid calls the fuzz starts from launch', async () => {
    const before = fake.launches.length;
    await fc.assert(
      fc.asyncProperty(validFmhaFwdCalls({ target }), async (call) => {
        await warm(target, call);
        await run(target, call);
      }),
      { numRuns: 50, seed: SEED },
    );
    expect(fake.launches.length - before).toBeGreaterThanOrEqual(50);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch (and any compile of a rejected problem)', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidFmhaFwdCalls({ target }), async ({ call, labels }) => {
        await warm(target, call);
        await expectRejected(() => run(target, call), counters, tally, labels.join('; '), {
          checkedAfterBuild: target === 'runner' ? RUN_BUFFERS : [],
        });
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine(`fmha-fwd ${target}`, tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
