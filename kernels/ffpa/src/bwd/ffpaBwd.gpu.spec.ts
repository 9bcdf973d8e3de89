// GPU tests of FFPA's backward through its runner (node:test): dot_do_o, dq_acc zeroed, dq_dk_dv,
// convert_dq, driven by the pure launcher, against the fp32 CPU reference on every element of dQ,
// dK and dV (gradients start as NaN). The sm80 path: d 320 … 1024 and 576/512, ragged lengths 1,
// 17, 127, 259, 1000, causal masks of both alignments (fully masked rows), a sliding window, GQA,
// both layouts, varlen with empty sequences. The sm90 path (TMA, wgmma, clusters of 2 or 4 CTAs):
// d 320, 512, 576/512, 704 and 1024, lengths 1, 17, 127, 259, 1000, causal masks of both alignments
// (fully masked rows), a window, GQA, both layouts, varlen with an empty query and an empty key sequence.
// Skipped (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { buildFmhaBwdKernelsOnce } from '@tilekit/fmha-launch';
import { runFmhaBwdProblemGpuCase } from '@tilekit/fmha-launch/testing';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import type { FfpaBwdPath } from './ffpaBwdKernelSet.ts';
import { FfpaBwdRunner } from './ffpaBwdRunner.ts';

const compiler = gpuTestCompiler('ffpa-bwd-gpu');
const buildKernel = buildFmhaBwdKernelsOnce({ device: () => Device.open(0), compiler });

const cases: readonly (FfpaBwdProblem & { readonly label: string; readonly path: FfpaBwdPath })[] = [
  {
    label: 'bf16 d320 causal s259 GQA 4:1, bshd',
    path: 'sm80',
    dtype: 'bf16',
    batch: 1,
    nheadQ: 4,
    nheadK: 1,
    hdimQ: 320,
    seqlenQ: 259,
    seqlenK: 259,
    mask: causalTopLeft,
    inputLayout: 'bshd',
    outputLayout: 'bshd',
  },
  {
    label: 'fp16 d512 no mask b2 h2 s127',
    path: 'sm80',
    dtype: 'fp16',
    batch: 2,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 512,
    seqlenQ: 127,
    seqlenK: 127,
    mask: noMask,
  },
  {
    label: 'bf16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:2',
    path: 'sm80',
    dtype: 'bf16',
    batch: 1,
    nheadQ: 4,
    nheadK: 2,
    hdimQ: 576,
    hdimV: 512,
    seqlenQ: 259,
    seqlenK: 100,
    mask: causalBottomRight,
  },
  {
    label: 'fp16 d384 window t:40,3 varlen q 17,0,127 k 300,5,127',
    path: 'sm80',
    dtype: 'fp16',
    batch: 3,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 384,
    seqstartQ: [0, 17, 17, 144],
    seqstartK: [0, 300, 305, 432],
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'bf16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259, bshd',
    path: 'sm80',
    dtype: 'bf16',
    batch: 4,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 1024,
    seqstartQ: [0, 17, 17, 144, 145],
    seqstartK: [0, 17, 20, 147, 406],
    mask: causalTopLeft,
    inputLayout: 'bshd',
    outputLayout: 'bshd',
  },
  {
    label: 'fp16 d704 no mask s1 sk1000',
    path: 'sm80',
    dtype: 'fp16',
    batch: 1,
    nheadQ: 1,
    nheadK: 1,
    hdimQ: 704,
    seqlenQ: 1,
    seqlenK: 1000,
    mask: noMask,
  },
  {
    label: 'sm90 bf16 d320 causal s259 GQA 4:1, bshd',
    path: 'sm90',
    dtype: 'bf16',
    batch: 1,
    nheadQ: 4,
    nheadK: 1,
    hdimQ: 320,
    seqlenQ: 259,
    seqlenK: 259,
    mask: causalTopLeft,
    inputLayout: 'bshd',
    outputLayout: 'bshd',
  },
  {
    label: 'sm90 fp16 d512 no mask b2 h2 s127',
    path: 'sm90',
    dtype: 'fp16',
    batch: 2,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 512,
    seqlenQ: 127,
    seqlenK: 127,
    mask: noMask,
  },
  {
    label: 'sm90 bf16 d512 causal bottom-right varlen q 17,0,127 k 17,5,259, GQA 2:1',
    path: 'sm90',
    dtype: 'bf16',
    batch: 3,
    nheadQ: 2,
    nheadK: 1,
    hdimQ: 512,
    seqstartQ: [0, 17, 17, 144],
    seqstartK: [0, 17, 22, 281],
    mask: causalBottomRight,
  },
  {
    label: 'sm90 fp16 d320 window t:40,3 varlen q 259,17 k 127,0',
    path: 'sm90',
    dtype: 'fp16',
    batch: 2,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 320,
    seqstartQ: [0, 259, 276],
    seqstartK: [0, 127, 127],
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'sm90 bf16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259, bshd (4-CTA cluster)',
    path: 'sm90',
    dtype: 'bf16',
    batch: 4,
    nheadQ: 2,
    nheadK: 2,
    hdimQ: 1024,
    seqstartQ: [0, 17, 17, 144, 145],
    seqstartK: [0, 17, 20, 147, 406],
    mask: causalTopLeft,
    inputLayout: 'bshd',
    outputLayout: 'bshd',
  },
  {
    label: 'sm90 bf16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:2',
    path: 'sm90',
    dtype: 'bf16',
    batch: 1,
    nheadQ: 4,
    nheadK: 2,
    hdimQ: 576,
    hdimV: 512,
    seqlenQ: 259,
    seqlenK: 100,
    mask: causalBottomRight,
  },
  {
    label: 'sm90 fp16 d704 no mask s1 sk1000',
    path: 'sm90',
    dtype: 'fp16',
    batch: 1,
    nheadQ: 1,
    nheadK: 1,
    hdimQ: 704,
    seqlenQ: 1,
    seqlenK: 1000,
    mask: noMask,
  },
];

for (const { label, path, ...problem } of cases) {
  test(`kernel-ffpa/gpu bwd: ${label}`, gpu.options, async () => {
    const device = Device.open(0);
    console.log(await runFmhaBwdProblemGpuCase(problem, device, (p) => FfpaBwdRunner.create(p, { device, compiler, buildKernel, path })));
  });
}
