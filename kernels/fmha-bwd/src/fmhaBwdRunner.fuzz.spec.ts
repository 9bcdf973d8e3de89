// Fuzzed invalid arguments of the attention-backward runner (issue 17 item 4): 1000 random invalid
// argument sets through `FmhaBwdRunner.create` + `run` on the fake addon. Every one must be a typed
// ArgumentError naming an argument and a rule, with no launch, and no compile for a rejected problem
// or workspace.
import { restoreAddonPath } from '@tilekit/runtime/testing/fuzzAddonPath';
import fc from 'fast-check';
import { Device, type DeviceBuffer } from '@tilekit/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFmhaBwdProblem, type FmhaBwdProblem } from '@tilekit/fmha';
import { FmhaBwdKernel, FmhaBwdRunner, type FmhaBwdKernelInstance, type FmhaBwdRunnerBuffers } from './fmhaBwdRunner.ts';
import {
  allocPlan,
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
import { fmhaBwdBufferSpecs, invalidFmhaBwdCalls, validFmhaBwdCalls, type FmhaBwdFuzzCall } from './testing/invalidFmhaBwdArgs.ts';

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
  const buildKernel = <I extends FmhaBwdKernelInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
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

/**
 * A valid score-modifier problem's buffers (exactly their extents) with `scoreModifier` from `spec`
 * (given the slopes buffer), run once; the kernels launched.
 */
async function runScoreMod(problem: FmhaBwdProblem, spec: (slopes: DeviceBuffer) => unknown): Promise<string[]> {
  const plans = Object.fromEntries(
    Object.entries(fmhaBwdBufferSpecs(checkFmhaBwdProblem(problem))).map(([k, s]) => [k, allocPlan(s.need)]),
  );
  const buffers = materialize(device, plans);
  const slopes = device.alloc(4 * problem.nheadQ);
  const before = fake.launches.length;
  try {
    const compiler = fakeCompiler(fake, counter);
    const buildKernel = <I extends FmhaBwdKernelInstance>(i: I): Promise<FmhaBwdKernel<I>> =>
      FmhaBwdKernel.build(withoutSource(i), { device, compiler });
    const runner = await FmhaBwdRunner.create(problem, { device, compiler, buildKernel });
    try {
      runner.run({ ...buffers.ranges, scoreModifier: spec(slopes) } as unknown as FmhaBwdRunnerBuffers);
    } finally {
      runner.dispose();
    }
    return fake.launches.slice(before).map((l) => l.kernel);
  } finally {
    slopes.dispose();
    buffers.dispose();
  }
}

describe('fmha-bwd runner: score modifiers (fake addon)', () => {
  const softcap: FmhaBwdProblem = {
    dtype: 'fp16',
    batch: 2,
    nheadQ: 4,
    nheadK: 2,
    hdimQ: 128,
    seqlenQ: 259,
    seqlenK: 300,
    scoreModifier: 'softcap',
  };
  const alibi: FmhaBwdProblem = {
    dtype: 'fp16',
    batch: 2,
    nheadQ: 4,
    nheadK: 2,
    hdimQ: 128,
    seqstartQ: [0, 17, 276],
    seqstartK: [0, 0, 300],
    mask: 'b',
    scoreModifier: 'alibi',
  };
  const capSpec = () => ({ kind: 'softcap', cap: 30 });
  const slopesSpec = (s: DeviceBuffer) => ({ kind: 'alibi', slopes: { ptr: s.ptr, bytes: s.bytes } });

  it("launches dot_do_o, the modifier's dq_dk_dv and convert_dq with the modifier's values", async () => {
    const names = await runScoreMod(softcap, capSpec);
    expect(names).toHaveLength(3);
    expect(names[1]).toMatch(/^fmha_bwd_dq_dk_dv_sm90_.*_softcap$/);
    expect(names[0]).toMatch(/dot_do_o/);
    const group = await runScoreMod(alibi, slopesSpec);
    expect(group[1]).toMatch(/^fmha_bwd_dq_dk_dv_sm90_.*window.*_alibi$/);
  });

  it('rejects a problem the score-modifier catalog lacks before any compile, and a bad buffers.scoreModifier before any launch', async () => {
    const tally = newTally();
    const counters = { launches: () => fake.launches.length, compiles: () => counter.compiles };
    const afterBuild = { checkedAfterBuild: ['scoreModifier', 'scoreModifier.cap', 'scoreModifier.slopes'] };
    const rejected = async (what: string, problem: FmhaBwdProblem, spec: (slopes: DeviceBuffer) => unknown) =>
      (await expectRejected(() => runScoreMod(problem, spec), counters, tally, what, afterBuild)).problems.map((p) => p.argument);
    expect(await rejected('unknown modifier', { ...softcap, scoreModifier: 'bias' as never }, capSpec)).toEqual(['problem.scoreModifier']);
    expect(await rejected('bf16 softcap', { ...softcap, dtype: 'bf16' }, capSpec)).toEqual(['problem.dtype']);
    expect(await rejected('d64 softcap', { ...softcap, hdimQ: 64 }, capSpec)).toEqual(['problem.hdimQ']);
    expect(await rejected('deterministic alibi', { ...alibi, deterministic: true }, slopesSpec)).toEqual(['problem.deterministic']);
    expect(await rejected('no values', softcap, () => undefined)).toEqual(['scoreModifier']);
    expect(await rejected('values of another kind', softcap, slopesSpec)).toEqual(['scoreModifier']);
    const { scoreModifier: _none, ...dense } = softcap;
    expect(await rejected('values without a modifier', dense, capSpec)).toEqual(['scoreModifier']);
    expect(await rejected('not an object', softcap, () => 'softcap')).toEqual(['scoreModifier']);
    expect(await rejected('cap 0', softcap, () => ({ kind: 'softcap', cap: 0 }))).toEqual(['scoreModifier.cap']);
    expect(await rejected('two slopes for four heads', alibi, (s) => ({ kind: 'alibi', slopes: { ptr: s.ptr, bytes: 8 } }))).toEqual([
      'scoreModifier.slopes',
    ]);
    expect(await rejected('null slopes', alibi, () => ({ kind: 'alibi', slopes: { ptr: 0n, bytes: 16 } }))).toEqual([
      'scoreModifier.slopes',
    ]);
    expect(tally.typed).toBe(tally.sets);
    expect(tally.launches).toBe(0);
  });
});
