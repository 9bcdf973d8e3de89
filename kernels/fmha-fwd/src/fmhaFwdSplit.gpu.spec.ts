// GPU tests of split-KV attention forward through the runner (node:test; run on the GPU machine):
// split partials merged by the combine kernel against the fp32 CPU reference (probabilities not
// narrowed) on decode shapes (sq 1, 16, 64 over sk 4097 and 32768, GQA; and over sk 259 and 300, small
// enough for compute-sanitizer), masks whose windows leave
// whole splits without keys, varlen with empty sequences, both layouts; LSE checked; and one split
// vs many agreeing. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceAttentionFwd, checkFmhaFwdProblem, fmhaFwdReferenceArgs, formatFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { FmhaFwdCombineKernel } from './fmhaFwdCombineLauncher.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { FmhaFwdRunner } from './fmhaFwdRunner.ts';
import { checkFmhaFwdOutputs } from '@tilekit/fmha-launch/testing';
import { fmhaFwdGpuInputs, type FmhaFwdGpuInputs } from './testing/fmhaFwdRandomGpuCase.ts';
import { fmhaFwdRunnerGpuRun, type FmhaFwdRunnerGpuRun } from './testing/fmhaFwdRunnerGpuRun.ts';

const buildKernel = buildOncePerInstance((i: FmhaFwdInstance) =>
  FmhaFwdKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('fmha-split-gpu') }),
);
const buildCombine = buildOncePerInstance((i: FmhaFwdCombineInstance) =>
  FmhaFwdCombineKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('fmha-split-gpu') }),
);

/** Runs `problem` through the runner; returns O (decoded, in O's strides) and LSE. */
async function runOnGpu(problem: FmhaFwdProblem, data: FmhaFwdGpuInputs): Promise<FmhaFwdRunnerGpuRun> {
  const device = Device.open(0);
  const runner = await FmhaFwdRunner.create(problem, { device, compiler: gpuTestCompiler('fmha-split-gpu'), buildKernel, buildCombine });
  try {
    return fmhaFwdRunnerGpuRun(runner, device, data);
  } finally {
    runner.dispose();
  }
}

/** Compares with the CPU reference; returns a summary line. Every row of every (batch, head) is checked, LSE included. */
async function check(problem: FmhaFwdProblem, options: { readonly compareWithOneSplit?: boolean } = {}): Promise<string> {
  const p = checkFmhaFwdProblem(problem);
  const data = fmhaFwdGpuInputs(p);
  const args = fmhaFwdReferenceArgs(p, data);
  const ref = referenceAttentionFwd(args);
  const got = await runOnGpu(problem, data);
  assert.ok(got.lse !== undefined, 'LSE read back');
  assert.ok(got.numSplits > 1 || problem.splitKv === 1, `expected a split run, got ${got.numSplits} split(s)`);
  const { bad, first, worstO, worstL, tol } = checkFmhaFwdOutputs(args, ref, got);
  assert.equal(bad, 0, `${got.instances} (${got.numSplits} splits): ${bad} elements off; first: ${first}`);
  let agreement = '';
  if (options.compareWithOneSplit === true) {
    const one = await runOnGpu({ ...problem, splitKv: 1 }, data);
    let worst = 0;
    one.o.forEach((x, i) => (worst = Math.max(worst, Math.abs(x - got.o[i]!))));
    // Both are within tol of the reference, so within 2·tol of each other; check it directly.
    assert.ok(worst <= 2 * (tol.o.atol + tol.o.rtol), `one split vs ${got.numSplits}: max |ΔO| ${worst}`);
    agreement = `; vs one split max |ΔO| ${worst.toExponential(2)}`;
  }
  return `${formatFmhaFwdProblem(p)} → ${got.instances}, ${got.numSplits} splits: max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}), LSE ${worstL.toExponential(2)}${agreement}`;
}

const decodeBase = { dtype: 'fp16', batch: 1, nheadQ: 2, nheadK: 1, hdimQ: 128, lse: true } as const;

const cases: readonly (readonly [string, FmhaFwdProblem, { readonly compareWithOneSplit?: boolean }?])[] = [
  ...[1, 16, 64].flatMap((sq) =>
    [4097, 32768].map((sk): readonly [string, FmhaFwdProblem, { compareWithOneSplit: boolean }] => [
      `decode sq${sq} sk${sk} GQA 2:1, auto splits`,
      { ...decodeBase, seqlenQ: sq, seqlenK: sk, splitKv: 'auto' },
      { compareWithOneSplit: sq === 16 },
    ]),
  ),
  [
    'decode sq16 sk4097 explicit 128 splits (the most; 33 keys each → some splits one partial tile)',
    { ...decodeBase, seqlenQ: 16, seqlenK: 4097, splitKv: 128 },
  ],
  [
    'causal bottom-right sq64 sk4097, 16 splits, bshd',
    { ...decodeBase, seqlenQ: 64, seqlenK: 4097, splitKv: 16, mask: 'b', inputLayout: 'bshd', outputLayout: 'bshd' },
  ],
  [
    'causal top-left sq64 sk4097, 16 splits: every split but the first fully masked',
    { ...decodeBase, seqlenQ: 64, seqlenK: 4097, splitKv: 16, mask: 't' },
  ],
  [
    'window b:100,0 sq16 sk32768, 32 splits: only the last split has keys',
    { ...decodeBase, seqlenQ: 16, seqlenK: 32768, splitKv: 32, mask: 'b:100,0' },
  ],
  [
    'window t:17,5 sq64 sk4097, 8 splits: rows past the diagonal see nothing',
    { ...decodeBase, seqlenQ: 64, seqlenK: 4097, splitKv: 8, mask: 't:17,5' },
  ],
  [
    'bf16 d64 GQA 4:1 sq1 sk32768 auto',
    { dtype: 'bf16', batch: 2, nheadQ: 4, nheadK: 1, hdimQ: 64, seqlenQ: 1, seqlenK: 32768, splitKv: 'auto', lse: true },
  ],
  [
    'fp16 d256 bshd sq16 sk4097, 6 splits',
    {
      dtype: 'fp16',
      batch: 1,
      nheadQ: 2,
      hdimQ: 256,
      seqlenQ: 16,
      seqlenK: 4097,
      splitKv: 6,
      lse: true,
      inputLayout: 'bshd',
      outputLayout: 'bshd',
    },
  ],
  [
    'fp16 d192/dv128 sq17 sk4097, 5 splits',
    { dtype: 'fp16', batch: 1, nheadQ: 2, hdimQ: 192, seqlenQ: 17, seqlenK: 4097, splitKv: 5, lse: true },
  ],
  ['fp16 d32 sq1 sk4097, 4 splits', { dtype: 'fp16', batch: 1, nheadQ: 1, hdimQ: 32, seqlenQ: 1, seqlenK: 4097, splitKv: 4, lse: true }],
  [
    'bf16 d96 sq64 sk4097, 9 splits, causal bottom-right',
    { dtype: 'bf16', batch: 1, nheadQ: 2, hdimQ: 96, seqlenQ: 64, seqlenK: 4097, splitKv: 9, lse: true, mask: 'b' },
  ],
  [
    'varlen q 1,0,16,64,17 k 4097,100,0,2000,259 (an empty query and an empty key sequence), GQA 4:2, 8 splits, bshd',
    {
      dtype: 'bf16',
      batch: 5,
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 128,
      seqstartQ: [0, 1, 1, 17, 81, 98],
      seqstartK: [0, 4097, 4197, 4197, 6197, 6456],
      splitKv: 8,
      lse: true,
      inputLayout: 'bshd',
      outputLayout: 'bshd',
    },
    { compareWithOneSplit: true },
  ],
  [
    'varlen causal bottom-right q 1,64 k 32768,17, auto splits',
    {
      dtype: 'fp16',
      batch: 2,
      nheadQ: 2,
      hdimQ: 128,
      seqstartQ: [0, 1, 65],
      seqstartK: [0, 32768, 32785],
      splitKv: 'auto',
      lse: true,
      mask: 'b',
    },
  ],
  // Small shapes (keys in the hundreds) with the same paths: what compute-sanitizer can afford (tools/device/sanitizeCases.mjs).
  [
    'small: varlen q 1,0,17 k 300,40,0 (an empty query and an empty key sequence), GQA 2:1, 3 splits, bshd',
    {
      dtype: 'fp16',
      batch: 3,
      nheadQ: 2,
      nheadK: 1,
      hdimQ: 128,
      seqstartQ: [0, 1, 1, 18],
      seqstartK: [0, 300, 340, 340],
      splitKv: 3,
      lse: true,
      inputLayout: 'bshd',
      outputLayout: 'bshd',
    },
    { compareWithOneSplit: true },
  ],
  [
    'small: window t:17,5 sq17 sk300, 3 splits: only the first split has keys',
    { ...decodeBase, seqlenQ: 17, seqlenK: 300, splitKv: 3, mask: 't:17,5' },
  ],
  [
    'small: bf16 d64 GQA 4:1 causal bottom-right sq16 sk259, 2 splits',
    { ...decodeBase, dtype: 'bf16', hdimQ: 64, nheadQ: 4, seqlenQ: 16, seqlenK: 259, splitKv: 2, mask: 'b' },
  ],
];

for (const [label, problem, options] of cases) {
  test(`kernel-fmha-fwd/gpu split-KV: ${label}`, gpu.options, async () => {
    console.log(await check(problem, options));
  });
}
