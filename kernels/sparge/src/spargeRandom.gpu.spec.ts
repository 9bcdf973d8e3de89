// Randomized GPU tests of the Sparge operator (node:test; run on the GPU machine): TILEKIT_RANDOM_RUNS
// (default 200) valid problems drawn by fast-check from TILEKIT_RANDOM_SEED (default below, printed in
// every test name) — small ragged shapes, fp16/bf16, d 64/128, GQA, batch and varlen mode with empty
// sequences, layouts, topk/cdf, simthreshd1, causal, int8, smoothK, sink, pipeline vsa/jenga, PV vote
// none/warp/block — each through SpargeRunner: the block map against the CPU selection (rows may
// differ only within rounding), O and LSE against the CPU attention over the GPU's map (see
// testing/spargeRandomGpuCase.ts). A failure prints the seed and the problem as one JSON line;
// TILEKIT_RANDOM_SPARGE_CASE='<that line>' replays it alone. Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { SpargeFwdKernel } from './attention/spargeFwdLauncher.ts';
import type { SpargeFwdInstance } from './attention/spargeFwdInstance.ts';
import { planSparge, SpargeRunner, type SpargeProblem } from './spargeRunner.ts';
import {
  SPARGE_RANDOM_DEFAULT_RUNS,
  SPARGE_RANDOM_DEFAULT_SEED,
  spargeRandomLabel,
  spargeRandomProblems,
} from './testing/randomSpargeConfig.ts';
import { runSpargeRandomCase } from './testing/spargeRandomGpuCase.ts';

const compiler = () => gpuTestCompiler('sparge-random-gpu');
let runner: SpargeRunner | undefined;
const runnerOnce = (): SpargeRunner => (runner ??= new SpargeRunner({ device: Device.open(0), compiler: compiler() }));

const seed = Number(process.env['TILEKIT_RANDOM_SEED'] || SPARGE_RANDOM_DEFAULT_SEED);
const runs = Number(process.env['TILEKIT_RANDOM_RUNS'] || SPARGE_RANDOM_DEFAULT_RUNS);
assert.ok(
  Number.isSafeInteger(seed) && Number.isSafeInteger(runs) && runs >= 1,
  `TILEKIT_RANDOM_SEED (${seed}) and TILEKIT_RANDOM_RUNS (${runs}) must be integers, runs ≥ 1`,
);
const replay = process.env['TILEKIT_RANDOM_SPARGE_CASE'];
const cases: readonly SpargeProblem[] = replay ? [JSON.parse(replay) as SpargeProblem] : spargeRandomProblems(seed, runs);
const origin = replay ? 'replayed from TILEKIT_RANDOM_SPARGE_CASE' : `seed ${seed}`;

test(
  `kernel-sparge/gpu random (${origin}): compile the attention instances of the ` +
    `${cases.length} cases, 16 at a time (the runner then loads them from the cache)`,
  gpu.options,
  async (t) => {
    const instances = [...new Map(cases.map((c) => planSparge(c).instance).map((i): [string, SpargeFwdInstance] => [i.name, i])).values()];
    for (let i = 0; i < instances.length; i += 16) {
      const built = await Promise.all(
        instances.slice(i, i + 16).map((instance) => SpargeFwdKernel.build(instance, { device: Device.open(0), compiler: compiler() })),
      );
      for (const k of built) k.dispose();
    }
    t.diagnostic(`${instances.length} sparse attention instances compiled`);
  },
);

cases.forEach((c, i) => {
  test(`kernel-sparge/gpu random #${i} (${origin}): ${spargeRandomLabel(c)}`, gpu.options, async () => {
    try {
      console.log(await runSpargeRandomCase(c, runnerOnce()));
    } catch (error) {
      throw new Error(`random case #${i} (${origin}) failed; replay: TILEKIT_RANDOM_SPARGE_CASE='${JSON.stringify(c)}'\n${String(error)}`, {
        cause: error,
      });
    }
  });
});
