// Fuzzed invalid arguments of the permute launcher (issue 17 item 4): 1000 random invalid argument
// sets through `PermuteKernel.run` on the fake addon; every one must be a typed ArgumentError naming
// an argument and a rule, with no launch and no compile.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermuteInstance } from './permuteInstance.ts';
import { PermuteKernel } from './permuteLauncher.ts';
import type { PermuteProblem } from './permuteProblem.ts';
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
import { invalidPermuteCalls, permuteInstanceNamed, validPermuteCalls, type PermuteFuzzCall } from './testing/invalidPermuteArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x17_04_01;

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };
let kernelFor: (instance: PermuteInstance) => Promise<PermuteKernel>;

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  const compiler = fakeCompiler(fake, counter);
  kernelFor = buildOncePerInstance((instance: PermuteInstance) => PermuteKernel.build(withoutSource(instance), { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

/** Runs one call (the kernel of its instance built beforehand: building is not under test). */
async function run(call: PermuteFuzzCall): Promise<void> {
  const kernel = await kernelFor(permuteInstanceNamed(call.instance));
  const buffers = materialize(device, call.buffers);
  try {
    kernel.run(call.problem as unknown as PermuteProblem, { src: buffers.ranges['src']!, dst: buffers.ranges['dst']! });
  } finally {
    buffers.dispose();
  }
}

describe('permute launcher: fuzzed invalid arguments', () => {
  it('the valid calls the fuzz starts from launch', async () => {
    const before = fake.launches.length;
    await fc.assert(fc.asyncProperty(validPermuteCalls(), run), { numRuns: 100, seed: SEED });
    expect(fake.launches.length - before).toBe(100);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch or compile', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidPermuteCalls(), async ({ call, labels }) => {
        await kernelFor(permuteInstanceNamed(call.instance));
        await expectRejected(() => run(call), counters, tally, labels.join('; '));
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine('permute launcher', tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
