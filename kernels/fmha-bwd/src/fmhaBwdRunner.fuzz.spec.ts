// Fuzzed invalid arguments of the attention-backward runner (issue 17 item 4): 1000 random invalid
// argument sets through `FmhaBwdRunner.create` + `run` on the fake addon. Every one must be a typed
// ArgumentError naming an argument and a rule, with no launch, and no compile for a rejected problem
// or workspace.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { Device, type DeviceBuffer } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FmhaBwdProblem } from './fmhaBwdProblem.ts';
import { FmhaBwdKernel, FmhaBwdRunner, type FmhaBwdAnyInstance, type FmhaBwdRunnerBuffers } from './fmhaBwdRunner.ts';
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
import { invalidFmhaBwdCalls, validFmhaBwdCalls, type FmhaBwdFuzzCall } from './testing/invalidFmhaBwdArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x17_04_04;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
/** The runner builds its kernels for a valid problem and workspace before it sees the buffers: a call rejected only for these may have compiled. */
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'dO', 'lse', 'dQ', 'dK', 'dV', 'seqstartQ', 'seqstartK'];

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/**
 * Creates the runner, then runs it. Its kernels are built afresh each time (no source emitted:
 * cheap), so a rejected problem or workspace that reached a build would show as a compile.
 */
async function run(call: FmhaBwdFuzzCall): Promise<void> {
  const buffers = materialize(device, call.buffers);
  const { workspace, ...tensors } = buffers.ranges;
  const compiler = fakeCompiler(fake, counter);
  const buildKernel = <I extends FmhaBwdAnyInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
    FmhaBwdKernel.build(withoutSource(i), { device, compiler });
  try {
    const runner = await FmhaBwdRunner.create(call.problem as unknown as FmhaBwdProblem, {
      device,
      compiler,
      buildKernel,
      ...(workspace === undefined ? {} : { workspace: workspace as DeviceBuffer }),
    });
    try {
      runner.run(tensors as unknown as FmhaBwdRunnerBuffers);
    } finally {
      runner.dispose();
    }
  } finally {
    buffers.dispose();
  }
}

describe('fmha-bwd runner: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', async () => {
    const before = fake.launches.length;
    await fc.assert(fc.asyncProperty(validFmhaBwdCalls(), run), { numRuns: 50, seed: SEED });
    expect(fake.launches.length - before).toBeGreaterThanOrEqual(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch (and any compile of a rejected problem)', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidFmhaBwdCalls(), async ({ call, labels }) => {
        await expectRejected(() => run(call), counters, tally, labels.join('; '), { checkedAfterBuild: RUN_BUFFERS });
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine('fmha-bwd runner', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
