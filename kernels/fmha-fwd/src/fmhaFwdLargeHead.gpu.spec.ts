// GPU tests of the large-head-dim instances (node:test; `npm run test:gpu`, or tools/device on the
// GPU machine): Q and K streamed in head-dim chunks, O split by columns across two groups of
// consumer warpgroups (each computing S, or one handing P to the other); d 512 and 576 / d_v 512 against the fp32 CPU reference on ragged shapes,
// masks that fully mask rows, GQA and varlen with an empty sequence. Skipped (loudly, by the
// runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { gpu } from '@tilekit/runtime/testing';
import { FMHA_FWD_LARGE_HEAD_CATALOG, FMHA_FWD_LARGE_HEAD_SPLITS } from './fmhaFwdLargeHeadCatalog.ts';
import { fmhaFwdCatalogInstanceFor, fmhaFwdGpuKernelOf } from './testing/fmhaFwdCatalogGpuKernel.ts';
import { runFmhaFwdGpuCase, type FmhaFwdGpuCase } from './testing/fmhaFwdGpuCase.ts';

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
];

for (const split of FMHA_FWD_LARGE_HEAD_SPLITS) {
  const catalog = FMHA_FWD_LARGE_HEAD_CATALOG.filter((i) => i.policy.outputSplit === split);
  const prefix = split.tag === 'shareP' ? 'large head dims, shared P' : 'large head dims';
  for (const c of cases) {
    test(`kernel-fmha-fwd/gpu ${prefix}: ${c.label}`, gpu.options, async () => {
      console.log(await runFmhaFwdGpuCase(c, await fmhaFwdGpuKernelOf(fmhaFwdCatalogInstanceFor(catalog, c))));
    });
  }
}
