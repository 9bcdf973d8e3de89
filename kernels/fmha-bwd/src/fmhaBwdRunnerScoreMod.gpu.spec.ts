// GPU tests of attention backward with a score modifier through the runner (node:test; run on the
// GPU machine): a problem with `scoreModifier` (soft-capping at 1.5, ALiBi with the geometric slopes
// of attentionScoreSetup) dispatched onto the score-modifier catalog's dq_dk_dv, the modifier's
// values passed with the buffers; dQ, dK, dV against the float64 CPU reference with the modifier
// applied (forward O/LSE from referenceAttentionFwd, O rounded to the dtype), on ragged lengths,
// GQA, causal masks of both alignments, a sliding window and none, varlen with empty sequences,
// both layouts. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attentionScoreSetup,
  causalBottomRight,
  causalTopLeft,
  noMask,
  slidingWindowMask,
  type AttentionLayout,
  type FmhaScoreModifierKind,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { checkFmhaBwdProblem, fmhaBwdOperandElements, formatFmhaBwdProblem, type CheckedFmhaBwdProblem } from './fmhaBwdProblem.ts';
import { compareFmhaBwd, fmhaBwdReference } from './fmhaBwdReference.ts';
import { FmhaBwdKernel, FmhaBwdRunner, type FmhaBwdAnyInstance } from './fmhaBwdRunner.ts';
import type { FmhaBwdGpuCase } from './testing/fmhaBwdGpuCase.ts';

/** The cap of the soft-capping cases: small enough that tanh bends typical scores. */
const SOFTCAP = 1.5;

const buildKernel = buildOncePerInstance((instance: FmhaBwdAnyInstance) => {
  const compiler = gpuTestCompiler('fmha-bwd-gpu');
  return FmhaBwdKernel.build(instance, { device: Device.open(0), compiler });
}) as <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;

interface Case extends FmhaBwdGpuCase {
  readonly score: FmhaScoreModifierKind;
  readonly layout?: AttentionLayout;
}

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

function problemOf(c: Case): CheckedFmhaBwdProblem {
  const common = {
    dtype: c.dtype,
    batch: c.batch,
    nheadQ: c.h,
    nheadK: c.hk ?? c.h,
    hdimQ: c.d,
    mask: c.mask,
    inputLayout: c.layout ?? 'bhsd',
    outputLayout: c.layout ?? 'bhsd',
    scoreModifier: c.score,
  } as const;
  return checkFmhaBwdProblem(
    Array.isArray(c.sq)
      ? { ...common, seqstartQ: starts(c.sq as readonly number[]), seqstartK: starts(c.sk as readonly number[]) }
      : { ...common, seqlenQ: c.sq as number, seqlenK: c.sk as number },
  );
}

async function runCase(c: Case): Promise<string> {
  const p = problemOf(c);
  const score = attentionScoreSetup(c.score, p.nheadQ, SOFTCAP)!;
  const elems = fmhaBwdOperandElements(p);
  // At least one element each: an empty operand still uploads a (one-element) buffer.
  const fill = (count: number, seed: number): Uint16Array => randomBits16(p.dtype, Math.max(1, count), seed);
  const data = {
    q: fill(elems.q, 1 + elems.q),
    k: fill(elems.k, 2 + elems.k),
    v: fill(elems.v, 3 + elems.v),
    dO: fill(elems.dO, 4 + elems.dO),
  };
  const ref = fmhaBwdReference(p, data, score.reference);
  const device = Device.open(0);
  const runner = await FmhaBwdRunner.create(p, { device, compiler: gpuTestCompiler('fmha-bwd-gpu'), buildKernel });
  assert.equal(
    runner.kernels.dqDkDv.instance.policy.scoreModifier?.tag,
    c.score,
    `${runner.kernels.dqDkDv.instance.name} applies ${c.score}`,
  );
  const bufs = {
    q: device.upload(data.q),
    k: device.upload(data.k),
    v: device.upload(data.v),
    o: device.upload(ref.o),
    dO: device.upload(data.dO),
    lse: device.upload(ref.lse.length > 0 ? ref.lse : new Float32Array(1)),
    dQ: device.alloc(Math.max(1, elems.dQ) * 2).fill(0xff),
    dK: device.alloc(Math.max(1, elems.dK) * 2).fill(0xff),
    dV: device.alloc(Math.max(1, elems.dV) * 2).fill(0xff),
    ...(p.mode === 'group'
      ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ)), seqstartK: device.upload(new Int32Array(p.seqstartK)) }
      : {}),
  };
  const slopes = score.slopes === undefined ? undefined : device.upload(score.slopes);
  const bits = (b: { copyToHost(): Uint8Array }): Uint16Array => {
    const x = b.copyToHost();
    return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
  };
  try {
    runner.run({ ...bufs, scoreModifier: score.kernel(slopes?.ptr) });
    const results = compareFmhaBwd(p, ref, { dQ: bits(bufs.dQ), dK: bits(bufs.dK), dV: bits(bufs.dV) });
    for (const r of results)
      assert.equal(r.wrong, 0, `${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`);
    return `${runner.instances.map((i) => i.name).join(' + ')}: ${results.map((r) => `${r.tensor} max |err| ${r.maxAbsErr.toExponential(2)}`).join(', ')}`;
  } finally {
    device.synchronize();
    for (const b of Object.values(bufs)) b.dispose();
    slopes?.dispose();
    runner.dispose();
  }
}

const cases: readonly Case[] = [
  {
    label: 'soft-capping 1.5, no mask, b2 s259, GQA 4:2',
    dtype: 'fp16',
    d: 128,
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
    dtype: 'fp16',
    d: 128,
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
    dtype: 'fp16',
    d: 128,
    batch: 3,
    h: 4,
    hk: 2,
    sq: [17, 0, 259],
    sk: [259, 5, 300],
    mask: causalBottomRight,
    score: 'softcap',
  },
  {
    label: 'ALiBi, no mask, b2 sq127 sk300',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: 127,
    sk: 300,
    mask: noMask,
    score: 'alibi',
  },
  {
    label: 'ALiBi, causal top-left s259, GQA 4:1',
    dtype: 'fp16',
    d: 128,
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
    dtype: 'fp16',
    d: 128,
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
    console.log(await runCase(c));
  });
}
