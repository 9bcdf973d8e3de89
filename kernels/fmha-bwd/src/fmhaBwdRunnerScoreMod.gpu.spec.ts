// GPU tests of attention backward with a score modifier through the runner (node:test; run on the
// GPU machine): a problem with `scoreModifier` (soft-capping at 1.5, ALiBi with the geometric slopes
// of attentionScoreSetup) dispatched onto the score-modifier catalog's dq_dk_dv, the modifier's
// values passed with the buffers; dQ, dK, dV against the float64 CPU reference with the modifier
// applied (forward O/LSE from referenceAttentionFwd, O rounded to the dtype), on ragged lengths,
// GQA, causal masks of both alignments, a sliding window and none, varlen with empty sequences,
// both layouts. Skipped (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask, type FmhaScoreModifierKind } from '@tilekit/fmha';
import { gpu } from '@tilekit/runtime/testing';
import { runFmhaBwdRunnerGpuCase, type FmhaBwdRunnerGpuCase } from './testing/fmhaBwdRunnerGpuCase.ts';

interface Case extends FmhaBwdRunnerGpuCase {
  readonly score: FmhaScoreModifierKind;
}

/** Every case: fp16, head dim 128. */
const fp16d128 = { dtype: 'fp16', d: 128 } as const;

const cases: readonly Case[] = [
  {
    label: 'soft-capping 1.5, no mask, b2 s259, GQA 4:2',
    ...fp16d128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 259,
    mask: noMask,
    score: 'softcap',
  },
  {
    label: 'soft-capping 1.5, causal top-left s259, bshd',
    ...fp16d128,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 259,
    layout: 'bshd',
    mask: causalTopLeft,
    score: 'softcap',
  },
  {
    label: 'soft-capping 1.5, causal bottom-right varlen q 17,0,259 k 259,5,300, GQA 4:2',
    ...fp16d128,
    batch: 3,
    h: 4,
    hk: 2,
    sq: [17, 0, 259],
    sk: [259, 5, 300],
    mask: causalBottomRight,
    score: 'softcap',
  },
  { label: 'ALiBi, no mask, b2 sq127 sk300', ...fp16d128, batch: 2, h: 2, sq: 127, sk: 300, mask: noMask, score: 'alibi' },
  {
    label: 'ALiBi, causal top-left s259, GQA 4:1',
    ...fp16d128,
    batch: 1,
    h: 4,
    hk: 1,
    sq: 259,
    sk: 259,
    mask: causalTopLeft,
    score: 'alibi',
  },
  {
    label: 'ALiBi, window t:40,3 varlen q 1,259,0 k 300,259,17, GQA 4:2, bshd',
    ...fp16d128,
    batch: 3,
    h: 4,
    hk: 2,
    sq: [1, 259, 0],
    sk: [300, 259, 17],
    layout: 'bshd',
    mask: slidingWindowMask(40, 3),
    score: 'alibi',
  },
];

for (const c of cases) {
  test(`kernel-fmha-bwd/gpu runner score modifier: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaBwdRunnerGpuCase(c));
  });
}
