// GPU tests of the output-split instances (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): O split by columns across two groups of consumer warpgroups, d 256 and d 64 / d_v 512,
// against the fp32 CPU reference on ragged shapes, masks that fully mask rows, GQA and varlen with
// an empty sequence. Skipped (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { gpu } from '@tilekit/runtime/testing';
import { FMHA_FWD_OUTPUT_SPLIT_CATALOG } from './fmhaFwdOutputSplitCatalog.ts';
import { fmhaFwdCatalogInstanceFor, fmhaFwdGpuKernelOf } from './testing/fmhaFwdCatalogGpuKernel.ts';
import { runFmhaFwdGpuCase, type FmhaFwdGpuCase } from '@tilekit/fmha-launch/testing';

const cases: readonly FmhaFwdGpuCase[] = [
  { label: 'fp16 d256 no mask b2 h2 s259', dtype: 'fp16', d: 256, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: noMask },
  {
    label: 'bf16 d256 causal s1000 GQA 4:2',
    dtype: 'bf16',
    d: 256,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  { label: 'fp16 d256 no mask s1 sk4097', dtype: 'fp16', d: 256, batch: 1, h: 2, sq: 1, sk: 4097, layout: 'bhsd', mask: noMask },
  {
    label: 'fp16 d64/dv512 no mask b2 h2 s127',
    dtype: 'fp16',
    d: 64,
    dv: 512,
    batch: 2,
    h: 2,
    sq: 127,
    sk: 127,
    layout: 'bhsd',
    mask: noMask,
  },
  {
    label: 'bf16 d64/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1',
    dtype: 'bf16',
    d: 64,
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
    label: 'fp16 d64/dv512 window t:40,3 varlen q 17,0,259 k 300,5,259',
    dtype: 'fp16',
    d: 64,
    dv: 512,
    batch: 3,
    h: 2,
    sq: [17, 0, 259],
    sk: [300, 5, 259],
    layout: 'bshd',
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'bf16 d256 window t:17,5 varlen q 1,127 k 127,1',
    dtype: 'bf16',
    d: 256,
    batch: 2,
    h: 2,
    sq: [1, 127],
    sk: [127, 1],
    layout: 'bhsd',
    mask: slidingWindowMask(17, 5),
  },
];

for (const c of cases) {
  test(`kernel-fmha-fwd/gpu output split: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await fmhaFwdGpuKernelOf(fmhaFwdCatalogInstanceFor(FMHA_FWD_OUTPUT_SPLIT_CATALOG, c))));
  });
}
