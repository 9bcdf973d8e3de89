// GPU tests of Sparge's sparse attention (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): both pipelines (vsa: LUT walk, jenga: block mask) against the float64 CPU references with
// a random block map — the masked reference with PV skipping off (pvThreshold +∞ in every mode), the
// PV-skip model with a finite threshold on structured inputs where it fires (warp and block votes) —
// on ragged lengths (1, 17, 127, 259, 1000), causal (diagonal blocks element-masked), GQA, varlen,
// every block on (= dense attention) and query blocks with no block at all (O = 0, LSE = −∞).
// Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { runSpargeFwdGpuCase, type SpargeFwdGpuCase } from '../testing/spargeFwdGpuCase.ts';
import { SPARGE_FWD_CATALOG } from './spargeFwdCatalog.ts';
import type { SpargeFwdInstance } from './spargeFwdInstance.ts';
import { SpargeFwdKernel } from './spargeFwdLauncher.ts';

const kernelFor = buildOncePerInstance((instance: SpargeFwdInstance) =>
  SpargeFwdKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('sparge-gpu') }),
);

function instanceFor(c: SpargeFwdGpuCase): SpargeFwdInstance {
  const found = SPARGE_FWD_CATALOG.find(
    (i) =>
      i.policy.pipeline === c.pipeline &&
      i.policy.dtype === c.dtype &&
      i.policy.headDim === c.d &&
      i.policy.mask === (c.causal ? 'window' : 'none') &&
      (i.policy.pvGate !== undefined) === (c.pvMode !== 'none') &&
      (i.policy.qkOperand?.tag === 'int8') === (c.int8 === true),
  );
  assert.ok(found, `no instance for ${c.label}`);
  return found;
}

const inf = Infinity;
const cases: SpargeFwdGpuCase[] = [];
for (const pipeline of ['vsa', 'jenga'] as const) {
  cases.push(
    {
      label: `${pipeline} fp16 d128 b2 h2 s1000 density 0.4, no skip`,
      dtype: 'fp16',
      d: 128,
      batch: 2,
      h: 2,
      s: 1000,
      causal: false,
      pipeline,
      pvMode: 'none',
      pvThreshold: 20,
      density: 0.4,
    },
    {
      label: `${pipeline} bf16 d64 b1 h2 s259 causal density 0.6, warp mode with +∞`,
      dtype: 'bf16',
      d: 64,
      batch: 1,
      h: 2,
      s: 259,
      causal: true,
      pipeline,
      pvMode: 'warp',
      pvThreshold: inf,
      density: 0.6,
    },
    {
      label: `${pipeline} fp16 d64 b1 h4 hk2 s127 every block (dense), block mode with +∞`,
      dtype: 'fp16',
      d: 64,
      batch: 1,
      h: 4,
      hk: 2,
      s: 127,
      causal: false,
      pipeline,
      pvMode: 'block',
      pvThreshold: inf,
      density: 1,
    },
    {
      label: `${pipeline} fp16 d128 b1 h2 s1000 causal, empty query blocks 0 and 3`,
      dtype: 'fp16',
      d: 128,
      batch: 1,
      h: 2,
      s: 1000,
      causal: true,
      pipeline,
      pvMode: 'none',
      pvThreshold: inf,
      density: 0.5,
      emptyRows: [0, 3],
    },
    {
      label: `${pipeline} bf16 d128 varlen 1,17,0,259,1000 causal density 0.5`,
      dtype: 'bf16',
      d: 128,
      batch: 5,
      h: 2,
      s: [1, 17, 0, 259, 1000],
      causal: true,
      pipeline,
      pvMode: 'block',
      pvThreshold: inf,
      density: 0.5,
    },
    // Small versions of the s1000 shapes above (compute-sanitizer's cases: tools/device/sanitizeCases.mjs).
    {
      label: `${pipeline} fp16 d128 b1 h2 s259 causal, empty query block 1, no skip`,
      dtype: 'fp16',
      d: 128,
      batch: 1,
      h: 2,
      s: 259,
      causal: true,
      pipeline,
      pvMode: 'none',
      pvThreshold: inf,
      density: 0.5,
      emptyRows: [1],
    },
    {
      label: `${pipeline} bf16 d128 varlen 1,17,0,259 causal density 0.5, block mode with +∞`,
      dtype: 'bf16',
      d: 128,
      batch: 4,
      h: 2,
      s: [1, 17, 0, 259],
      causal: true,
      pipeline,
      pvMode: 'block',
      pvThreshold: inf,
      density: 0.5,
    },
  );
}
// int8 Q·Kᵀ (per-block scales, K smoothed), both head dims and pipelines.
cases.push(
  {
    label: 'vsa fp16 d128 b2 h2 s1000 int8 Q·Kᵀ density 0.5',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    s: 1000,
    causal: false,
    pipeline: 'vsa',
    pvMode: 'none',
    pvThreshold: inf,
    density: 0.5,
    int8: true,
  },
  {
    label: 'jenga bf16 d64 b1 h4 hk2 s259 causal int8 Q·Kᵀ, block mode with +∞',
    dtype: 'bf16',
    d: 64,
    batch: 1,
    h: 4,
    hk: 2,
    s: 259,
    causal: true,
    pipeline: 'jenga',
    pvMode: 'block',
    pvThreshold: inf,
    density: 0.7,
    int8: true,
  },
  {
    label: 'vsa fp16 d64 b1 h2 s2048 synthetic int8 Q·Kᵀ, warp vote, pvThreshold 8',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    s: 2048,
    causal: false,
    pipeline: 'vsa',
    pvMode: 'warp',
    pvThreshold: 8,
    density: 1,
    synthetic: true,
    int8: true,
  },
  {
    label: 'vsa fp16 d128 b1 h2 s259 int8 Q·Kᵀ density 0.5',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    s: 259,
    causal: false,
    pipeline: 'vsa',
    pvMode: 'none',
    pvThreshold: inf,
    density: 0.5,
    int8: true,
  },
);
// The PV skip firing: structured inputs whose later tiles fall far below the running row maxima.
for (const pvMode of ['warp', 'block'] as const) {
  cases.push({
    label: `vsa fp16 d128 b1 h2 s2048 synthetic, ${pvMode} vote, pvThreshold 6 / 10`,
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    s: 2048,
    causal: false,
    pipeline: 'vsa',
    pvMode,
    pvThreshold: [6, 10],
    density: 1,
    synthetic: true,
  });
  cases.push({
    label: `jenga fp16 d64 b1 h2 s2048 synthetic causal, ${pvMode} vote, pvThreshold 8`,
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    s: 2048,
    causal: true,
    pipeline: 'jenga',
    pvMode,
    pvThreshold: 8,
    density: 1,
    synthetic: true,
  });
}
// The skip firing at s512 (the CPU model skips 160 rows in the warp case, 768 in the block case): small enough for compute-sanitizer.
cases.push(
  {
    label: 'vsa fp16 d128 b1 h2 s512 synthetic, warp vote, pvThreshold 6 / 10',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    s: 512,
    causal: false,
    pipeline: 'vsa',
    pvMode: 'warp',
    pvThreshold: [6, 10],
    density: 1,
    synthetic: true,
  },
  {
    label: 'jenga fp16 d64 b1 h2 s512 synthetic causal, block vote, pvThreshold 8',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    s: 512,
    causal: true,
    pipeline: 'jenga',
    pvMode: 'block',
    pvThreshold: 8,
    density: 1,
    synthetic: true,
  },
);

for (const c of cases) {
  test(`kernel-sparge/gpu attention: ${c.label}`, gpu.options, async () => {
    const r = await runSpargeFwdGpuCase(c, await kernelFor(instanceFor(c)));
    console.log(r.summary);
    if (c.pvMode !== 'none' && c.pvThreshold !== inf && r.modelSkippedRows > 0)
      assert.ok(r.skipped > 0 || c.pvMode === 'warp', `the model skips ${r.modelSkippedRows} row-tiles but the kernel skipped no P·V`);
    if (c.pvMode === 'none' || c.pvThreshold === inf) assert.equal(r.skipped, 0, 'no P·V may be skipped with the skip off');
  });
}
