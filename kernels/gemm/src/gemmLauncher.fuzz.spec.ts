// Fuzzed invalid arguments of the GEMM launchers (issue 17 item 4): 1000 random invalid argument
// sets through `GemmKernel.run` (sm_90a) and 1000 through `GemmSm80Kernel.run` (sm_80 kernels in
// their sm_90a build) on the fake addon; every one must be a typed ArgumentError naming an argument
// and a rule, with no launch and no compile.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGemmKernel, type AnyGemmInstance, type AnyGemmKernel } from './anyGemmKernel.ts';
import type { GemmBuffers } from './gemmLauncher.ts';
import type { GemmProblem } from './gemmProblem.ts';
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
import { gemmInstanceNamed, invalidGemmCalls, validGemmCalls, type GemmFuzzCall, type GemmFuzzFamily } from './testing/invalidGemmArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x17_04_02;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
let kernelFor: (instance: AnyGemmInstance) => Promise<AnyGemmKernel>;

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  kernelFor = buildOncePerInstance((instance: AnyGemmInstance) => buildGemmKernel(withoutSource(instance), { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/** Runs one call through its instance's kernel (built beforehand: building is not under test). */
async function run(call: GemmFuzzCall): Promise<void> {
  const kernel = await kernelFor(gemmInstanceNamed(call.instance));
  const buffers = materialize(device, call.buffers);
  try {
    kernel.run(call.problem as unknown as GemmProblem, buffers.ranges as unknown as GemmBuffers);
  } finally {
    buffers.dispose();
  }
}

describe.each(['sm90a', 'sm80'] as const)('GEMM %s launcher: fuzzed invalid arguments', (family: GemmFuzzFamily) => {
  it('the valid calls the fuzz starts from launch', async () => {
    const before = fake.launches.length;
    await fc.assert(fc.asyncProperty(validGemmCalls({ family }), run), { numRuns: 100, seed: SEED });
    expect(fake.launches.length - before).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidGemmCalls({ family }), async ({ call, labels }) => {
        await kernelFor(gemmInstanceNamed(call.instance));
        await expectRejected(() => run(call), counters, tally, labels.join('; '));
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine(`gemm ${family} launcher`, tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
