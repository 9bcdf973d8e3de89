// GPU tests of attention forward with a score modifier through the runner (node:test; run on the
// GPU machine): `FmhaFwdRunner.create` with `problem.scoreModifier` (soft-capping at
// GPU_CASE_SOFTCAP, ALiBi with the geometric slopes of attentionScoreSetup) picks the
// score-modifier catalog's instance in one pass (splitKv 'auto' stays at 1), `run` passes
// `buffers.scoreModifier`; O and LSE against the fp32 CPU reference with the modifier applied, on
// ragged lengths, GQA, causal masks of both alignments, a sliding window and none, varlen with empty
// sequences, both layouts. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attentionScoreSetup,
  checkFmhaFwdProblem,
  fmhaFwdReferenceArgs,
  formatFmhaFwdProblem,
  referenceAttentionFwd,
  type FmhaFwdProblem,
  type FmhaScoreModifierKind,
} from '@tilekit/fmha';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { FmhaFwdRunner } from './fmhaFwdRunner.ts';
import { checkFmhaFwdOutputs, GPU_CASE_SOFTCAP } from '@tilekit/fmha-launch/testing';
import { fmhaFwdGpuInputs } from './testing/fmhaFwdRandomGpuCase.ts';
import { fmhaFwdRunnerGpuRun } from './testing/fmhaFwdRunnerGpuRun.ts';

const buildKernel = buildOncePerInstance((i: FmhaFwdInstance) =>
  FmhaFwdKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('fmha-gpu') }),
);

/** Asserts that `runner` runs an instance applying the problem's modifier, in one pass. */
function checkPlan(runner: FmhaFwdRunner): void {
  const instance = runner.plan.instance;
  assert.equal(
    instance.policy.scoreModifier?.tag,
    runner.problem.scoreModifier,
    `${instance.name} applies ${runner.problem.scoreModifier}`,
  );
  assert.equal(runner.problem.numSplits, 1, 'a score modifier runs in one pass');
}

/** Runs `problem` (which has a score modifier) through the runner and checks O and LSE; returns a summary line. */
async function check(problem: FmhaFwdProblem): Promise<string> {
  const p = checkFmhaFwdProblem(problem);
  const score = attentionScoreSetup(p.scoreModifier, p.nheadQ, GPU_CASE_SOFTCAP)!;
  const data = fmhaFwdGpuInputs(p);
  const args = { ...fmhaFwdReferenceArgs(p, data), scoreModifier: score.reference };
  const ref = referenceAttentionFwd(args);
  const device = Device.open(0);
  const runner = await FmhaFwdRunner.create(problem, { device, compiler: gpuTestCompiler('fmha-gpu'), buildKernel });
  try {
    checkPlan(runner);
    const got = fmhaFwdRunnerGpuRun(runner, device, data, score);
    assert.ok(got.lse !== undefined, 'LSE read back');
    const { bad, first, worstO, worstL, tol } = checkFmhaFwdOutputs(args, ref, got);
    assert.equal(bad, 0, `${got.instances}: ${bad} elements off; first: ${first}`);
    const errors = `max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}), LSE ${worstL.toExponential(2)}`;
    return `${formatFmhaFwdProblem(p)} → ${got.instances}: ${errors}`;
  } finally {
    runner.dispose();
  }
}

const base = { dtype: 'fp16', hdimQ: 128, lse: true } as const;

/** A varlen bshd problem with GQA 4:2 (three sequences). */
function varlenBshd(
  seqstartQ: readonly number[],
  seqstartK: readonly number[],
  mask: string,
  scoreModifier: FmhaScoreModifierKind,
): FmhaFwdProblem {
  return { ...base, batch: 3, nheadQ: 4, nheadK: 2, seqstartQ, seqstartK, mask, inputLayout: 'bshd', outputLayout: 'bshd', scoreModifier };
}

const cases: readonly (readonly [string, FmhaFwdProblem])[] = [
  [
    'soft-capping, no mask, b2 s259, GQA 4:2, splitKv auto',
    { ...base, batch: 2, nheadQ: 4, nheadK: 2, seqlenQ: 259, seqlenK: 259, splitKv: 'auto', scoreModifier: 'softcap' },
  ],
  [
    'soft-capping, causal bottom-right varlen q 17,0,259 k 259,5,300, GQA 4:2, bshd',
    varlenBshd([0, 17, 17, 276], [0, 259, 264, 564], 'b', 'softcap'),
  ],
  ['ALiBi, no mask, sq127 sk1000, 4 heads', { ...base, batch: 1, nheadQ: 4, seqlenQ: 127, seqlenK: 1000, scoreModifier: 'alibi' }],
  ['ALiBi, causal top-left b2 s259', { ...base, batch: 2, nheadQ: 2, seqlenQ: 259, seqlenK: 259, mask: 't', scoreModifier: 'alibi' }],
  [
    'ALiBi, window t:40,3 varlen q 1,259,0 k 300,259,17, GQA 4:2, bshd',
    varlenBshd([0, 1, 260, 260], [0, 300, 559, 576], 't:40,3', 'alibi'),
  ],
];

for (const [label, problem] of cases) {
  test(`kernel-fmha-fwd/gpu runner score modifier: ${label}`, gpu.options, async () => {
    console.log(await check(problem));
  });
}
