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
  fmhaFwdOperandElements,
  fmhaFwdReferenceArgs,
  formatFmhaFwdProblem,
  referenceAttentionFwd,
  type FmhaFwdProblem,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FmhaFwdInstance } from './fmhaFwdInstance.ts';
import { FmhaFwdKernel } from './fmhaFwdLauncher.ts';
import { FmhaFwdRunner } from './fmhaFwdRunner.ts';
import { checkFmhaFwdOutputs, GPU_CASE_SOFTCAP } from './testing/fmhaFwdGpuCase.ts';

const buildKernel = buildOncePerInstance((i: FmhaFwdInstance) =>
  FmhaFwdKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('fmha-gpu') }),
);

/** Runs `problem` (which has a score modifier) through the runner and checks O and LSE; returns a summary line. */
async function check(problem: FmhaFwdProblem): Promise<string> {
  const p = checkFmhaFwdProblem(problem);
  const score = attentionScoreSetup(p.scoreModifier, p.nheadQ, GPU_CASE_SOFTCAP)!;
  const elems = fmhaFwdOperandElements(p);
  const data = {
    q: randomBits16(p.dtype, Math.max(1, elems.q), 1 + p.rowsQ),
    k: randomBits16(p.dtype, Math.max(1, elems.k), 2 + p.rowsK),
    v: randomBits16(p.dtype, Math.max(1, elems.v), 3 + p.rowsK),
  };
  const args = { ...fmhaFwdReferenceArgs(p, data), scoreModifier: score.reference };
  const ref = referenceAttentionFwd(args);
  const device = Device.open(0);
  const runner = await FmhaFwdRunner.create(problem, { device, compiler: gpuTestCompiler('fmha-gpu'), buildKernel });
  const instance = runner.plan.instance;
  assert.equal(instance.policy.scoreModifier?.tag, p.scoreModifier, `${instance.name} applies ${p.scoreModifier}`);
  assert.equal(runner.problem.numSplits, 1, 'a score modifier runs in one pass');
  const starts = (s: readonly number[]) => device.upload(new Int32Array(s));
  const buffers = {
    q: device.upload(data.q),
    k: device.upload(data.k),
    v: device.upload(data.v),
    o: device.alloc(Math.max(1, elems.o) * 2).fill(0xff),
    lse: device.alloc(Math.max(1, elems.lse) * 4).fill(0xff),
    ...(p.mode === 'group' ? { seqstartQ: starts(p.seqstartQ), seqstartK: starts(p.seqstartK) } : {}),
  };
  const slopes = score.slopes === undefined ? undefined : device.upload(score.slopes);
  try {
    runner.run({ ...buffers, scoreModifier: score.kernel(slopes?.ptr) });
    device.synchronize();
    const bits = new Uint16Array(buffers.o.copyToHost().buffer);
    const o = Float64Array.from(bits.subarray(0, elems.o), (b) => decode(p.dtype, b));
    const lse = new Float32Array(buffers.lse.copyToHost().buffer).slice(0, elems.lse);
    const { bad, first, worstO, worstL, tol } = checkFmhaFwdOutputs(args, ref, { o, lse });
    assert.equal(bad, 0, `${instance.name}: ${bad} elements off; first: ${first}`);
    return `${formatFmhaFwdProblem(p)} → ${instance.name}: max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}), LSE ${worstL.toExponential(2)}`;
  } finally {
    device.synchronize();
    for (const b of Object.values(buffers)) b.dispose();
    slopes?.dispose();
    runner.dispose();
  }
}

const base = { dtype: 'fp16', hdimQ: 128, lse: true } as const;

const cases: readonly (readonly [string, FmhaFwdProblem])[] = [
  [
    'soft-capping, no mask, b2 s259, GQA 4:2, splitKv auto',
    { ...base, batch: 2, nheadQ: 4, nheadK: 2, seqlenQ: 259, seqlenK: 259, splitKv: 'auto', scoreModifier: 'softcap' },
  ],
  [
    'soft-capping, causal bottom-right varlen q 17,0,259 k 259,5,300, GQA 4:2, bshd',
    {
      ...base,
      batch: 3,
      nheadQ: 4,
      nheadK: 2,
      seqstartQ: [0, 17, 17, 276],
      seqstartK: [0, 259, 264, 564],
      mask: 'b',
      inputLayout: 'bshd',
      outputLayout: 'bshd',
      scoreModifier: 'softcap',
    },
  ],
  ['ALiBi, no mask, sq127 sk1000, 4 heads', { ...base, batch: 1, nheadQ: 4, seqlenQ: 127, seqlenK: 1000, scoreModifier: 'alibi' }],
  ['ALiBi, causal top-left b2 s259', { ...base, batch: 2, nheadQ: 2, seqlenQ: 259, seqlenK: 259, mask: 't', scoreModifier: 'alibi' }],
  [
    'ALiBi, window t:40,3 varlen q 1,259,0 k 300,259,17, GQA 4:2, bshd',
    {
      ...base,
      batch: 3,
      nheadQ: 4,
      nheadK: 2,
      seqstartQ: [0, 1, 260, 260],
      seqstartK: [0, 300, 559, 576],
      mask: 't:40,3',
      inputLayout: 'bshd',
      outputLayout: 'bshd',
      scoreModifier: 'alibi',
    },
  ],
];

for (const [label, problem] of cases) {
  test(`kernel-fmha-fwd/gpu runner score modifier: ${label}`, gpu.options, async () => {
    console.log(await check(problem));
  });
}
