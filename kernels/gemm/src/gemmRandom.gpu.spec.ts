// Randomized GPU tests of the GEMM operator (node:test; run on the GPU machine): TILEKIT_RANDOM_RUNS
// (default 200) valid configurations drawn by fast-check from TILEKIT_RANDOM_SEED (default below,
// printed in every test name) — fp16/bf16, layouts tn/nn/nt/tt, ragged m/n/k, padded leading
// dimensions, batches with gaps, the epilogue functors, persistent runs — each on its instance against
// the CPU reference within the CK-style thresholds, the padding untouched (see
// testing/gemmRandomGpuCase.ts). A failure prints the seed and the configuration as one JSON line;
// TILEKIT_RANDOM_GEMM_CASE='<that line>' replays it alone. Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { GemmInstance } from './gemmInstance.ts';
import { GemmKernel } from './gemmLauncher.ts';
import { runGemmRandomCase } from './testing/gemmRandomGpuCase.ts';
import {
  GEMM_RANDOM_DEFAULT_RUNS,
  GEMM_RANDOM_DEFAULT_SEED,
  gemmRandomConfigs,
  gemmRandomInstance,
  gemmRandomLabel,
  type GemmRandomConfig,
} from './testing/randomGemmConfig.ts';

const kernelFor = buildOncePerInstance((instance: GemmInstance) =>
  GemmKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('gemm-random-gpu') }),
);

const seed = Number(process.env['TILEKIT_RANDOM_SEED'] || GEMM_RANDOM_DEFAULT_SEED);
const runs = Number(process.env['TILEKIT_RANDOM_RUNS'] || GEMM_RANDOM_DEFAULT_RUNS);
assert.ok(
  Number.isSafeInteger(seed) && Number.isSafeInteger(runs) && runs >= 1,
  `TILEKIT_RANDOM_SEED (${seed}) and TILEKIT_RANDOM_RUNS (${runs}) must be integers, runs ≥ 1`,
);
const replay = process.env['TILEKIT_RANDOM_GEMM_CASE'];
const cases: readonly GemmRandomConfig[] = replay ? [JSON.parse(replay) as GemmRandomConfig] : gemmRandomConfigs(seed, runs);
const origin = replay ? 'replayed from TILEKIT_RANDOM_GEMM_CASE' : `seed ${seed}`;

after(async () => {
  for (const r of await Promise.allSettled(kernelFor.builds())) if (r.status === 'fulfilled') r.value.dispose();
});

test(`gemm/gpu random (${origin}): compile the instances of the ${cases.length} cases, 16 at a time`, gpu.options, async (t) => {
  const instances = [...new Map(cases.map(gemmRandomInstance).map((i): [string, GemmInstance] => [i.name, i])).values()];
  for (let i = 0; i < instances.length; i += 16) await Promise.all(instances.slice(i, i + 16).map(kernelFor));
  t.diagnostic(`${instances.length} instances built`);
});

cases.forEach((c, i) => {
  test(`gemm/gpu random #${i} (${origin}): ${gemmRandomLabel(c)}`, gpu.options, async () => {
    try {
      console.log(runGemmRandomCase(c, await kernelFor(gemmRandomInstance(c)), Device.open(0)));
    } catch (error) {
      throw new Error(`random case #${i} (${origin}) failed; replay: TILEKIT_RANDOM_GEMM_CASE='${JSON.stringify(c)}'\n${String(error)}`, {
        cause: error,
      });
    }
  });
});
