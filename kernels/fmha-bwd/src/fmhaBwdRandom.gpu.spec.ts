// Randomized GPU tests of attention backward (node:test; run on the GPU machine): TILEKIT_RANDOM_RUNS
// (default 200) valid problems drawn by fast-check from TILEKIT_RANDOM_SEED (default below, printed in
// every test name) — small ragged shapes, fp16/bf16, d 64/128/256, masks, GQA, batch and varlen mode
// with empty sequences, layouts, atomic and deterministic dQ — each through FmhaBwdRunner against the
// float64 CPU reference within attentionBwdToleranceFor (compareFmhaBwd); deterministic dQ bitwise
// identical over 3 runs. A failure prints the seed and the problem as one JSON line;
// TILEKIT_RANDOM_FMHA_BWD_CASE='<that line>' replays it alone. Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { checkFmhaBwdProblem, formatFmhaBwdProblem, type FmhaBwdProblem } from '@tilekit/fmha';
import { buildFmhaBwdKernelsOnce } from '@tilekit/fmha-launch';
import { runFmhaBwdProblemGpuCase } from '@tilekit/fmha-launch/testing';
import { FmhaBwdRunner, type FmhaBwdAnyInstance } from './fmhaBwdRunner.ts';
import {
  FMHA_BWD_RANDOM_DEFAULT_RUNS,
  FMHA_BWD_RANDOM_DEFAULT_SEED,
  fmhaBwdRandomKernelSet,
  fmhaBwdRandomProblems,
} from './testing/randomFmhaBwdConfig.ts';

const compiler = () => gpuTestCompiler('fmha-bwd-random-gpu');
const buildKernel = buildFmhaBwdKernelsOnce({ device: () => Device.open(0), compiler });

const seed = Number(process.env['TILEKIT_RANDOM_SEED'] || FMHA_BWD_RANDOM_DEFAULT_SEED);
const runs = Number(process.env['TILEKIT_RANDOM_RUNS'] || FMHA_BWD_RANDOM_DEFAULT_RUNS);
assert.ok(
  Number.isSafeInteger(seed) && Number.isSafeInteger(runs) && runs >= 1,
  `TILEKIT_RANDOM_SEED (${seed}) and TILEKIT_RANDOM_RUNS (${runs}) must be integers, runs ≥ 1`,
);
const replay = process.env['TILEKIT_RANDOM_FMHA_BWD_CASE'];
const cases: readonly FmhaBwdProblem[] = replay ? [JSON.parse(replay) as FmhaBwdProblem] : fmhaBwdRandomProblems(seed, runs);
const origin = replay ? 'replayed from TILEKIT_RANDOM_FMHA_BWD_CASE' : `seed ${seed}`;

after(async () => {
  for (const r of await Promise.allSettled(buildKernel.builds())) if (r.status === 'fulfilled') r.value.dispose();
});

test(`kernel-fmha-bwd/gpu random (${origin}): compile the kernels of the ${cases.length} cases, 16 at a time`, gpu.options, async (t) => {
  const smCount = Device.open(0).smCount;
  const instances = new Map<string, FmhaBwdAnyInstance>();
  for (const c of cases) for (const i of Object.values(fmhaBwdRandomKernelSet(c, smCount))) if (i !== null) instances.set(i.name, i);
  const all = [...instances.values()];
  for (let i = 0; i < all.length; i += 16) await Promise.all(all.slice(i, i + 16).map((instance) => buildKernel(instance)));
  t.diagnostic(`${all.length} kernels built`);
});

cases.forEach((c, i) => {
  test(`kernel-fmha-bwd/gpu random #${i} (${origin}): ${formatFmhaBwdProblem(checkFmhaBwdProblem(c))}`, gpu.options, async () => {
    try {
      console.log(
        await runFmhaBwdProblemGpuCase(c, Device.open(0), (p) =>
          FmhaBwdRunner.create(p, { device: Device.open(0), compiler: compiler(), buildKernel }),
        ),
      );
    } catch (error) {
      throw new Error(
        `random case #${i} (${origin}) failed; replay: TILEKIT_RANDOM_FMHA_BWD_CASE='${JSON.stringify(c)}'\n${String(error)}`,
        { cause: error },
      );
    }
  });
});
