// Randomized GPU tests of attention forward (node:test; run on the GPU machine): TILEKIT_RANDOM_RUNS
// (default 200) valid problems drawn by fast-check from TILEKIT_RANDOM_SEED (default below, printed in
// every test name) — small ragged shapes, fp16/bf16, every head-dim pair, masks, GQA, batch and varlen
// mode with empty sequences, layouts, LSE, split-KV — each through FmhaFwdRunner against the fp32 CPU
// reference within attentionFwdToleranceFor. A failure prints the seed and the problem as one JSON
// line; TILEKIT_RANDOM_FMHA_FWD_CASE='<that line>' replays it alone. Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { FmhaFwdCombineKernel } from './fmhaFwdCombineLauncher.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { checkFmhaFwdProblem, formatFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { planFmhaFwd } from './fmhaFwdRunner.ts';
import { runFmhaFwdRandomCase } from './testing/fmhaFwdRandomGpuCase.ts';
import { FMHA_FWD_RANDOM_DEFAULT_RUNS, FMHA_FWD_RANDOM_DEFAULT_SEED, fmhaFwdRandomProblems } from './testing/randomFmhaFwdConfig.ts';

const compiler = () => gpuTestCompiler('fmha-fwd-random-gpu');
const buildKernel = buildOncePerInstance((i: FmhaFwdInstance) => FmhaFwdKernel.build(i, { device: Device.open(0), compiler: compiler() }));
const buildCombine = buildOncePerInstance((i: FmhaFwdCombineInstance) =>
  FmhaFwdCombineKernel.build(i, { device: Device.open(0), compiler: compiler() }),
);

const seed = Number(process.env['TILEKIT_RANDOM_SEED'] || FMHA_FWD_RANDOM_DEFAULT_SEED);
const runs = Number(process.env['TILEKIT_RANDOM_RUNS'] || FMHA_FWD_RANDOM_DEFAULT_RUNS);
assert.ok(
  Number.isSafeInteger(seed) && Number.isSafeInteger(runs) && runs >= 1,
  `TILEKIT_RANDOM_SEED (${seed}) and TILEKIT_RANDOM_RUNS (${runs}) must be integers, runs ≥ 1`,
);
const replay = process.env['TILEKIT_RANDOM_FMHA_FWD_CASE'];
const cases: readonly FmhaFwdProblem[] = replay ? [JSON.parse(replay) as FmhaFwdProblem] : fmhaFwdRandomProblems(seed, runs);
const origin = replay ? 'replayed from TILEKIT_RANDOM_FMHA_FWD_CASE' : `seed ${seed}`;

after(async () => {
  for (const r of await Promise.allSettled([...buildKernel.builds(), ...buildCombine.builds()]))
    if (r.status === 'fulfilled') r.value.dispose();
});

/** Runs `builds` (nvcc compiles) `width` at a time. */
async function inBatches(builds: readonly (() => Promise<unknown>)[], width: number): Promise<void> {
  for (let i = 0; i < builds.length; i += width) await Promise.all(builds.slice(i, i + width).map((b) => b()));
}

test(`kernel-fmha-fwd/gpu random (${origin}): compile the instances of the ${cases.length} cases, 16 at a time`, gpu.options, async (t) => {
  const smCount = Device.open(0).smCount;
  const plans = cases.map((c) => planFmhaFwd(c, { smCount }));
  const kernels = new Map(plans.map((p) => [p.instance.name, p.instance]));
  const combines = new Map(plans.flatMap((p) => (p.combine ? [[p.combine.name, p.combine] as const] : [])));
  await inBatches(
    [...[...kernels.values()].map((k) => () => buildKernel(k)), ...[...combines.values()].map((k) => () => buildCombine(k))],
    16,
  );
  t.diagnostic(`${kernels.size} attention and ${combines.size} combine kernels built`);
});

cases.forEach((c, i) => {
  test(`kernel-fmha-fwd/gpu random #${i} (${origin}): ${formatFmhaFwdProblem(checkFmhaFwdProblem(c))}`, gpu.options, async () => {
    try {
      console.log(await runFmhaFwdRandomCase(c, { device: Device.open(0), compiler: compiler(), buildKernel, buildCombine }));
    } catch (error) {
      throw new Error(
        `random case #${i} (${origin}) failed; replay: TILEKIT_RANDOM_FMHA_FWD_CASE='${JSON.stringify(c)}'\n${String(error)}`,
        { cause: error },
      );
    }
  });
});
