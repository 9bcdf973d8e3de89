// GPU tests of attention backward through the runner (node:test; run by the lead on the H200):
// dot_do_o → dq_dk_dv → convert_dq against the float64 CPU reference (forward O/LSE from
// referenceAttentionFwd, O rounded to the dtype) on ragged varlen batches (seqlens 0 and 1), causal
// masks of both alignments, a sliding window, GQA, d 64/128, fp16/bf16, atomic and deterministic
// dQ; deterministic dQ is bitwise identical over `repeats` runs (runFmhaBwdRunnerGpuCase). Skipped
// (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { gpu } from '@tilekit/runtime/testing';
import { runFmhaBwdRunnerGpuCase, type FmhaBwdRunnerGpuCase } from './testing/fmhaBwdRunnerGpuCase.ts';

interface Case extends FmhaBwdRunnerGpuCase {
  readonly deterministic: boolean;
}

const cases: readonly Case[] = [
  {
    label: 'fp16 d128 no mask b2 h2 s259 (atomic)',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: 259,
    sk: 259,
    mask: noMask,
    deterministic: false,
  },
  {
    label: 'fp16 d128 no mask b2 h2 s259 (deterministic, persistent splits)',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: 259,
    sk: 259,
    mask: noMask,
    deterministic: true,
    repeats: 10,
  },
  {
    label: 'bf16 d64 causal top-left s1000 bshd (atomic)',
    dtype: 'bf16',
    d: 64,
    batch: 1,
    h: 2,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: causalTopLeft,
    deterministic: false,
  },
  {
    label: 'fp16 d64 causal bottom-right sq259 < sk1000, GQA 4:2 (deterministic)',
    dtype: 'fp16',
    d: 64,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 1000,
    mask: causalBottomRight,
    deterministic: true,
    repeats: 10,
  },
  {
    label: 'fp16 d128 causal bottom-right sq259 > sk100: fully masked rows',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 100,
    mask: causalBottomRight,
    deterministic: false,
  },
  {
    label: 'bf16 d128 sliding window t:17,5 s300 (deterministic)',
    dtype: 'bf16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 300,
    sk: 300,
    mask: slidingWindowMask(17, 5),
    deterministic: true,
    repeats: 10,
  },
  {
    label: 'bf16 d128 varlen q 1,17,0,127,259 k 17,1,5,127,300, GQA 4:1 (atomic)',
    dtype: 'bf16',
    d: 128,
    batch: 5,
    h: 4,
    hk: 1,
    sq: [1, 17, 0, 127, 259],
    sk: [17, 1, 5, 127, 300],
    mask: noMask,
    deterministic: false,
  },
  {
    label: 'fp16 d128 varlen q 1,17,0,127,259 k 17,1,0,127,300, GQA 4:2 (deterministic group mode: per-batch splits, no zeroing)',
    dtype: 'fp16',
    d: 128,
    batch: 5,
    h: 4,
    hk: 2,
    sq: [1, 17, 0, 127, 259],
    sk: [17, 1, 0, 127, 300],
    mask: noMask,
    deterministic: true,
    repeats: 10,
  },
  {
    label: 'fp16 d64 varlen causal bottom-right q 17,259,1 k 259,17,1 (deterministic, masked: zeroed)',
    dtype: 'fp16',
    d: 64,
    batch: 3,
    h: 2,
    sq: [17, 259, 1],
    sk: [259, 17, 1],
    mask: causalBottomRight,
    deterministic: true,
    repeats: 10,
  },
  {
    label: 'bf16 d64 varlen causal top-left q 300,0,64 k 300,64,64 bshd (atomic)',
    dtype: 'bf16',
    d: 64,
    batch: 3,
    h: 2,
    sq: [300, 0, 64],
    sk: [300, 64, 64],
    layout: 'bshd',
    mask: causalTopLeft,
    deterministic: false,
  },
  { label: 'fp16 d128 s1 sk4097 (atomic)', dtype: 'fp16', d: 128, batch: 1, h: 2, sq: 1, sk: 4097, mask: noMask, deterministic: false },
  {
    label: 'fp16 d64 causal b2 h8 s1100 (deterministic: 5 persistent splits on 132 SMs, up to 2 key tiles per split)',
    dtype: 'fp16',
    d: 64,
    batch: 2,
    h: 8,
    sq: 1100,
    sk: 1100,
    mask: causalTopLeft,
    deterministic: true,
    repeats: 10,
  },
];

for (const c of cases) {
  test(`kernel-fmha-bwd/gpu: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaBwdRunnerGpuCase(c));
  });
}
