// Fuzzed invalid arguments of Sparge (issue 17 item 4), on the fake addon: 1000 random invalid
// argument sets each through the runner (`SpargeRunner.prepare` + `launch`), the block map
// (`SpargeBlockMapKernels.prepare` + `launch`) and the sparse attention launcher
// (`SpargeFwdKernel.prepare`). Every one must be a typed ArgumentError naming an argument and a
// rule, with no launch, and no compile unless only the runner's buffers were wrong.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { buildOncePerInstance, Device, encodeTensorMapTiled, type Compiler } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpargeFwdInstance } from './attention/spargeFwdInstance.ts';
import { SpargeFwdKernel, type SpargeFwdBuffers, type SpargeFwdLaunchProblem } from './attention/spargeFwdLauncher.ts';
import { SpargeBlockMapKernels, type SpargeBlockMapBuffers, type SpargeBlockMapProblem } from './blockMap/spargeBlockMapKernels.ts';
import { planSparge, SpargeRunner, type SpargeBuffers, type SpargeProblem } from './spargeRunner.ts';
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
  invalidSpargeCalls,
  spargeFwdInstanceNamed,
  validSpargeCalls,
  type SpargeFuzzCall,
  type SpargeFuzzTarget,
} from './testing/invalidSpargeArgs.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0x17_04_05;

let fake: FuzzFakeAddon;
let device: Device;
let compiler: Compiler;
const counter = { compiles: 0 };
/** The runner builds its kernels for a valid problem before it checks the buffers: a call rejected only for these may have compiled. */
const RUN_BUFFERS = ['q', 'k', 'v', 'o', 'lse', 'seqstartQ', 'seqstartK'];
let runner: SpargeRunner;
let blockMaps: (headDim: number) => Promise<SpargeBlockMapKernels>;
let attention: (instance: SpargeFwdInstance) => Promise<SpargeFwdKernel>;

beforeAll(() => {
  fake = useFuzzFakeAddon();
  device = Device.open(0);
  compiler = fakeCompiler(fake, counter);
  runner = new SpargeRunner({ device, compiler });
  const maps = new Map<number, Promise<SpargeBlockMapKernels>>();
  blockMaps = (headDim) =>
    maps.get(headDim) ?? maps.set(headDim, SpargeBlockMapKernels.build({ device, compiler, headDims: [headDim] })).get(headDim)!;
  attention = buildOncePerInstance((i: SpargeFwdInstance) => SpargeFwdKernel.build(withoutSource(i), { device, compiler }));
});
afterAll(() => {
  dropFuzzFakeAddon();
  restoreAddonPath();
});

const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);

/** The block-map kernels or attention kernel a call runs, built beforehand (building is not under test). */
async function warm(target: SpargeFuzzTarget, call: SpargeFuzzCall): Promise<void> {
  if (target === 'blockMap') await blockMaps(call.problem['headDim'] as number);
  if (target === 'attention') await attention(spargeFwdInstanceNamed(call.instance));
}

/**
 * One call through `target`'s public entry point. A runner call with a corrupted problem gets a
 * fresh runner (no kernel built yet), so a rejected problem that reached a build shows as a compile;
 * one with only buffers corrupted reuses the warm runner (building its kernels emits their sources).
 */
async function run(target: SpargeFuzzTarget, call: SpargeFuzzCall, targets: readonly string[] = []): Promise<void> {
  const buffers = materialize(device, call.buffers);
  try {
    if (target === 'runner') {
      const fresh = targets.some((t) => !RUN_BUFFERS.includes(t));
      const prepared = await (fresh ? new SpargeRunner({ device, compiler }) : runner).prepare(
        call.problem as unknown as SpargeProblem,
        buffers.ranges as unknown as SpargeBuffers,
      );
      prepared.launch();
      prepared.dispose();
    } else if (target === 'blockMap') {
      const prepared = (await blockMaps(call.problem['headDim'] as number)).prepare(
        call.problem as unknown as SpargeBlockMapProblem,
        buffers.ranges as unknown as SpargeBlockMapBuffers,
      );
      prepared.launch();
      prepared.dispose();
    } else {
      const p: SpargeFwdLaunchProblem = { ...planSparge(call.problem as unknown as SpargeProblem).attention, ...call.patch };
      (await attention(spargeFwdInstanceNamed(call.instance))).prepare(p, buffers.ranges as unknown as SpargeFwdBuffers, encode).launch();
    }
  } finally {
    buffers.dispose();
  }
}

describe.each(['runner', 'blockMap', 'attention'] as const)('sparge %s: fuzzed invalid arguments', (target: SpargeFuzzTarget) => {
  it('the valid calls the fuzz starts from launch', async () => {
    const before = fake.launches.length;
    await fc.assert(
      fc.asyncProperty(validSpargeCalls({ target }), async (call) => {
        await warm(target, call);
        await run(target, call);
      }),
      { numRuns: 50, seed: SEED },
    );
    expect(fake.launches.length - before).toBeGreaterThanOrEqual(50);
  });

  it('rejects 1000 invalid argument sets with a typed error, before any launch (and any compile, unless only buffers were wrong)', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    await fc.assert(
      fc.asyncProperty(invalidSpargeCalls({ target }), async ({ call, labels, targets }) => {
        await warm(target, call);
        await expectRejected(() => run(target, call, targets), counters, tally, labels.join('; '), {
          checkedAfterBuild: target === 'runner' ? RUN_BUFFERS : [],
        });
      }),
      { numRuns: 1000, seed: SEED },
    );
    console.log(fuzzLine(`sparge ${target}`, tally));
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
