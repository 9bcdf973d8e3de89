// GPU tests of FFPA (node:test; `npm run test:gpu`, or tools/device on the GPU machine): every case
// runs through the operator's plan and launcher against the fp32 CPU reference — one CTA per query
// tile, a cluster of two (partial S exchanged through distributed shared memory), or column slices
// of O that recompute S (also run for every cluster case), and every case again on the sm_80 path
// (FFPA L1): d 320 … 1024 (d_v above 512 split evenly and not), 576 / 512, ragged lengths 1, 17, 127, 259, 1000 and 4097, causal masks of both
// alignments (fully masked rows), sliding windows, GQA, varlen with empty sequences, both layouts. Skipped (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, seqstartsOf, slidingWindowMask, type CheckedFmhaFwdProblem } from '@tilekit/fmha';
import { runFmhaFwdGpuCase, type FmhaFwdGpuCase, type FmhaFwdGpuKernel } from '@tilekit/fmha-launch/testing';
import { buildOncePerInstance, Device, encodeTensorMapTiled } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { checkFfpaProblem } from './checkFfpaProblem.ts';
import { buildFfpaKernel, type FfpaInstance } from './ffpaKernel.ts';
import { prepareFfpaLaunch } from './ffpaLauncher.ts';
import { ffpaSlicePlans, type FfpaPlanOptions } from './ffpaPlan.ts';

const cases: readonly FmhaFwdGpuCase[] = [
  {
    label: 'fp16 d320 causal s259 GQA 4:1',
    dtype: 'fp16',
    d: 320,
    batch: 1,
    h: 4,
    hk: 1,
    sq: 259,
    sk: 259,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  {
    label: 'bf16 d448 no mask varlen q 17,0,127 k 1,5,300',
    dtype: 'bf16',
    d: 448,
    batch: 3,
    h: 2,
    sq: [17, 0, 127],
    sk: [1, 5, 300],
    layout: 'bhsd',
    mask: noMask,
  },
  {
    label: 'bf16 d384 causal bottom-right sq127 sk259, GQA 4:2',
    dtype: 'bf16',
    d: 384,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 127,
    sk: 259,
    layout: 'bhsd',
    mask: causalBottomRight,
  },
  {
    label: 'fp16 d384 no mask varlen q 1,0,300 k 17,3,300',
    dtype: 'fp16',
    d: 384,
    batch: 3,
    h: 2,
    sq: [1, 0, 300],
    sk: [17, 3, 300],
    layout: 'bshd',
    mask: noMask,
  },
  { label: 'fp16 d512 no mask b2 h2 s259', dtype: 'fp16', d: 512, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: noMask },
  {
    label: 'bf16 d512 causal s1000 GQA 4:2',
    dtype: 'bf16',
    d: 512,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  { label: 'fp16 d512 no mask s1 sk4097', dtype: 'fp16', d: 512, batch: 1, h: 1, sq: 1, sk: 4097, layout: 'bhsd', mask: noMask },
  {
    label: 'bf16 d576/dv512 no mask s17 sk127',
    dtype: 'bf16',
    d: 576,
    dv: 512,
    batch: 1,
    h: 2,
    sq: 17,
    sk: 127,
    layout: 'bhsd',
    mask: noMask,
  },
  {
    label: 'fp16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1',
    dtype: 'fp16',
    d: 576,
    dv: 512,
    batch: 1,
    h: 4,
    hk: 1,
    sq: 259,
    sk: 100,
    layout: 'bshd',
    mask: causalBottomRight,
  },
  {
    label: 'bf16 d512 window t:40,3 varlen q 17,0,127 k 300,5,127',
    dtype: 'bf16',
    d: 512,
    batch: 3,
    h: 2,
    sq: [17, 0, 127],
    sk: [300, 5, 127],
    layout: 'bshd',
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'bf16 d1024 no mask s1000 GQA 2:1',
    dtype: 'bf16',
    d: 1024,
    batch: 1,
    h: 2,
    hk: 1,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: noMask,
  },
  {
    label: 'fp16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259',
    dtype: 'fp16',
    d: 1024,
    batch: 4,
    h: 2,
    sq: [17, 0, 127, 1],
    sk: [17, 3, 127, 259],
    layout: 'bhsd',
    mask: causalTopLeft,
  },
  {
    label: 'fp16 d704 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1 (384 + 320 columns)',
    dtype: 'fp16',
    d: 704,
    batch: 1,
    h: 4,
    hk: 1,
    sq: 259,
    sk: 100,
    layout: 'bshd',
    mask: causalBottomRight,
  },
  {
    label: 'bf16 d576/dv576 window t:40,3 varlen q 17,0,127 k 300,0,127 (320 + 256 columns)',
    dtype: 'bf16',
    d: 576,
    batch: 3,
    h: 2,
    sq: [17, 0, 127],
    sk: [300, 0, 127],
    layout: 'bhsd',
    mask: slidingWindowMask(40, 3),
  },
  { label: 'bf16 d768 no mask s1 sk4097', dtype: 'bf16', d: 768, batch: 1, h: 1, sq: 1, sk: 4097, layout: 'bhsd', mask: noMask },
  {
    label: 'fp16 d960 causal top-left b2 s127 GQA 4:2 (512 + 448 columns)',
    dtype: 'fp16',
    d: 960,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 127,
    sk: 127,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  {
    label: 'bf16 d640 no mask b2 h2 s259',
    dtype: 'bf16',
    d: 640,
    batch: 2,
    h: 2,
    sq: 259,
    sk: 259,
    layout: 'bhsd',
    mask: noMask,
  },
];

const kernelOf = buildOncePerInstance((instance: FfpaInstance) =>
  buildFfpaKernel(instance, { device: Device.open(0), compiler: gpuTestCompiler('ffpa-gpu') }),
);

/** The operator's checked problem of case `c` (packed tensors in its layout, as the case runner lays them out). */
function caseProblem(c: FmhaFwdGpuCase): CheckedFmhaFwdProblem {
  const sequences = Array.isArray(c.sq)
    ? { seqstartQ: seqstartsOf(c.sq as readonly number[]), seqstartK: seqstartsOf(c.sk as readonly number[]) }
    : { seqlenQ: c.sq as number, seqlenK: c.sk as number };
  const heads = { batch: c.batch, nheadQ: c.h, nheadK: c.hk ?? c.h };
  const dims = { hdimQ: c.d, hdimV: c.dv ?? c.d, inputLayout: c.layout, outputLayout: c.layout };
  return checkFfpaProblem({ dtype: c.dtype, ...heads, ...dims, ...sequences, mask: c.mask });
}

/** Case `c` as the operator runs it: its plan's slices (a cluster, or column slices with `clusters` false), through `prepareFfpaLaunch`. */
async function ffpaGpuKernel(c: FmhaFwdGpuCase, options: FfpaPlanOptions): Promise<FmhaFwdGpuKernel> {
  const plans = ffpaSlicePlans(caseProblem(c), options);
  const kernels = await Promise.all(
    plans.map(async (s) => ({ slice: { offset: s.offset, width: s.width }, kernel: await kernelOf(s.instance) })),
  );
  return {
    name: kernels.map((k) => k.kernel.instance.name).join(' + '),
    launch: (problem, buffers, dev) => prepareFfpaLaunch(kernels, problem, buffers, (m) => encodeTensorMapTiled(dev, m)).launch(),
  };
}

for (const c of cases) {
  test(`kernel-ffpa/gpu: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await ffpaGpuKernel(c, {})));
  });
}

// Every case on the sm_80 path (FFPA L1: mma.sync, cp.async ring, 256 columns of O per CTA at most).
for (const c of cases) {
  test(`kernel-ffpa/gpu sm80: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await ffpaGpuKernel(c, { path: 'sm80' })));
  });
}

// The same cases where the default plan is a cluster, on column slices that recompute S instead.
for (const c of cases.filter((x) => (x.dv ?? x.d) > 512 && x.d % 128 === 0 && (x.dv ?? x.d) % 128 === 0)) {
  test(`kernel-ffpa/gpu column slices: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await ffpaGpuKernel(c, { clusters: false })));
  });
}
