// Fuzzed invalid arguments of the FFPA runner on the fake addon (no GPU): 50 valid calls each launch
// one kernel per slice of the plan (one cluster launch at d = d_v ∈ {640, 768}), then 1000 random invalid argument sets through
// `FfpaRunner.create` + `run` must each be a typed ArgumentError naming an argument and a rule, with
// no launch, and no compile for a rejected problem (buffers are checked after the build).
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import type { FmhaFwdRunnerBuffers } from '@tilekit/fmha-launch';
import { Device, encodeTensorMapTiled } from '@tilekit/runtime';
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FfpaProblem } from './checkFfpaProblem.ts';
import { ffpaColumnSlices } from './ffpaColumnSlices.ts';
import { buildFfpaKernel, type FfpaKernel } from './ffpaKernel.ts';
import { FfpaRunner } from './ffpaRunner.ts';
import { invalidFfpaCalls, validFfpaCalls, type FfpaFuzzCall } from './testing/invalidFfpaArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0xff_9a_04;

/** The runner builds its kernels for a valid problem before it sees the buffers: a call rejected only for these may have compiled. */
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'lse', 'seqstartQ', 'seqstartK', 'seqlenK'];

let fake: FuzzFakeAddon;
let device: Device;
const counter = { compiles: 0 };

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);

/**
 * One call through the runner: plan and build (kernels built afresh each time, no source emitted:
 * cheap, so a rejected problem that reached a build would show as a compile), then run.
 */
async function run(call: FfpaFuzzCall, plan: { readonly clusters?: boolean } = {}): Promise<void> {
  const buffers = materialize(device, call.buffers);
  const built: FfpaKernel[] = [];
  try {
    const compiler = fakeCompiler(fake, counter);
    const runner = await FfpaRunner.create(call.problem as unknown as FfpaProblem, {
      device,
      compiler,
      buildKernel: async (i) => {
        const kernel = await buildFfpaKernel(withoutSource(i), { device, compiler });
        built.push(kernel);
        return kernel;
      },
      encode,
      ...plan,
    });
    try {
      runner.run(buffers.ranges as unknown as FmhaFwdRunnerBuffers);
    } finally {
      runner.dispose();
    }
  } finally {
    for (const k of built) k.dispose();
    buffers.dispose();
  }
}

describe('ffpa runner: fuzzed invalid arguments', () => {
  it('valid calls launch one kernel per slice of the plan: one cluster launch at d = d_v ∈ {640, 768}, else one per column slice', async () => {
    let calls = 0;
    const clusterCalls = { yes: 0, no: 0 };
    await fc.assert(
      fc.asyncProperty(validFfpaCalls(), async (call) => {
        const before = fake.launches.length;
        await run(call);
        const hdimQ = call.problem['hdimQ'] as number;
        const hdimV = (call.problem['hdimV'] ?? hdimQ) as number;
        const cluster = hdimQ === hdimV && (hdimV === 640 || hdimV === 768);
        const launches = fake.launches.slice(before);
        expect(launches).toHaveLength(cluster ? 1 : ffpaColumnSlices(hdimV).length);
        for (const l of launches) {
          expect(l.cluster).toEqual(cluster ? [1, 2, 1] : undefined);
          if (cluster) expect(l.grid[1]! % 2).toBe(0);
        }
        if (cluster) expect(launches[0]!.grid[1]).toBe(2 * (call.problem['nheadQ'] as number));
        clusterCalls[cluster ? 'yes' : 'no']++;
        calls++;
      }),
      { numRuns: 50, seed: SEED },
    );
    expect(calls).toBe(50);
    // The seed reaches both plans.
    expect(clusterCalls.yes).toBeGreaterThan(0);
    expect(clusterCalls.no).toBeGreaterThan(0);
  });

  it('with clusters: false, d = d_v 640 and 768 launch their column slices instead of a cluster', async () => {
    let calls = 0;
    await fc.assert(
      fc.asyncProperty(validFfpaCalls(), async (call) => {
        const hdimQ = call.problem['hdimQ'] as number;
        const hdimV = (call.problem['hdimV'] ?? hdimQ) as number;
        fc.pre(hdimQ === hdimV && (hdimV === 640 || hdimV === 768));
        const before = fake.launches.length;
        await run(call, { clusters: false });
        const launches = fake.launches.slice(before);
        expect(launches).toHaveLength(ffpaColumnSlices(hdimV).length);
        for (const l of launches) expect(l.cluster).toBeUndefined();
        calls++;
      }),
      { numRuns: 10, seed: SEED },
    );
    expect(calls).toBe(10);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch (and any compile of a rejected problem)', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidFfpaCalls(), async ({ call, labels }) => {
        await expectRejected(() => run(call), counters, tally, labels.join('; '), { checkedAfterBuild: RUN_BUFFERS });
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine('ffpa runner', tally));
    expect(tally.sets).toBe(1000);
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
    expect(tally.compiles).toBe(0);
  });
});
