// GPU tests of attention forward (node:test; `npm run test:gpu`, or tools/device on the GPU machine):
// instances against the fp32 CPU reference (probabilities not narrowed) on ragged shapes (seqlens 1,
// 17, 127, 259, 1000, 4097), masks incl. windows that fully mask rows, GQA, varlen with empty
// sequences, both layouts, LSE; split-KV partials merged by the combine kernel. Skipped (loudly,
// by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { gpu } from '@tilekit/runtime/testing';
import { FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import { FMHA_FWD_SCORE_MOD_CATALOG } from './fmhaFwdScoreModCatalog.ts';
import { fmhaFwdCatalogInstanceFor, fmhaFwdGpuKernelOf } from './testing/fmhaFwdCatalogGpuKernel.ts';
import { fmhaFwdCommonGpuCases, runFmhaFwdGpuCase, type FmhaFwdGpuCase } from '@tilekit/fmha-launch/testing';

const cases: readonly FmhaFwdGpuCase[] = [
  ...fmhaFwdCommonGpuCases,
  {
    label: 'fp16 d128 varlen causal bottom-right q 17,259 k 259,17',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: [17, 259],
    sk: [259, 17],
    layout: 'bhsd',
    mask: causalBottomRight,
  },
  { label: 'fp16 d64 no mask s1 sk4097', dtype: 'fp16', d: 64, batch: 1, h: 2, sq: 1, sk: 4097, layout: 'bhsd', mask: noMask },
  { label: 'fp16 d64 causal s259', dtype: 'fp16', d: 64, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bshd', mask: causalTopLeft },
  { label: 'bf16 d256 causal s259', dtype: 'bf16', d: 256, batch: 1, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: causalTopLeft },
  { label: 'fp16 d256 no mask s127 sk1000', dtype: 'fp16', d: 256, batch: 1, h: 2, sq: 127, sk: 1000, layout: 'bshd', mask: noMask },
  { label: 'fp16 d32 no mask s17', dtype: 'fp16', d: 32, batch: 1, h: 2, sq: 17, sk: 17, layout: 'bhsd', mask: noMask },
  { label: 'bf16 d96 causal s259', dtype: 'bf16', d: 96, batch: 1, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: causalTopLeft },
  {
    label: 'fp16 d192/dv128 causal s259',
    dtype: 'fp16',
    d: 192,
    dv: 128,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 259,
    layout: 'bhsd',
    mask: causalTopLeft,
  },
  { label: 'fp16 d128 causal s4097', dtype: 'fp16', d: 128, batch: 1, h: 1, sq: 4097, sk: 4097, layout: 'bhsd', mask: causalTopLeft },
  // NaN inputs propagate to exactly the rows that read them, and never hang the kernel.
  {
    label: 'NaN in Q row 37: that row is NaN, the rest exact (fp16 d64 s259)',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 259,
    layout: 'bhsd',
    mask: noMask,
    poison: { tensor: 'q', row: 37 },
  },
  {
    label: 'NaN in K row 100, causal: rows ≥ 100 of its GQA group are NaN, the rest exact (bf16 d128 s259)',
    dtype: 'bf16',
    d: 128,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 259,
    layout: 'bshd',
    mask: causalTopLeft,
    poison: { tensor: 'k', row: 100 },
  },
  // Score modifiers (attentionScoreSetup: soft-capping at 1.5, ALiBi's geometric slopes).
  {
    label: 'fp16 d128 soft-capping, no mask, b2 h4 GQA 4:2 s259',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 259,
    layout: 'bhsd',
    mask: noMask,
    score: 'softcap',
  },
  {
    label: 'fp16 d128 soft-capping, causal bottom-right varlen q 17,300,0 k 259,300,5',
    dtype: 'fp16',
    d: 128,
    batch: 3,
    h: 2,
    sq: [17, 300, 0],
    sk: [259, 300, 5],
    layout: 'bshd',
    mask: causalBottomRight,
    score: 'softcap',
  },
  {
    label: 'fp16 d128 ALiBi, no mask, sq 127 sk 1000',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 4,
    sq: 127,
    sk: 1000,
    layout: 'bhsd',
    mask: noMask,
    score: 'alibi',
  },
  {
    label: 'fp16 d128 ALiBi, window t:40,3, varlen q 1,259 k 300,259, GQA 4:2',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: [1, 259],
    sk: [300, 259],
    layout: 'bshd',
    mask: slidingWindowMask(40, 3),
    score: 'alibi',
  },
];

for (const c of cases) {
  test(`kernel-fmha-fwd/gpu: ${c.label}`, gpu.options, async () => {
    const catalog = c.score === undefined ? FMHA_FWD_CATALOG : FMHA_FWD_SCORE_MOD_CATALOG;
    console.log(await runFmhaFwdGpuCase(c, await fmhaFwdGpuKernelOf(fmhaFwdCatalogInstanceFor(catalog, c))));
  });
}
