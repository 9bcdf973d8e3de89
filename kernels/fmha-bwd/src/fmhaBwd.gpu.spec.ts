// GPU tests of attention backward through the runner (node:test; run by the lead on the H200):
// dot_do_o → dq_dk_dv → convert_dq against the float64 CPU reference (forward O/LSE from
// referenceAttentionFwd, O rounded to the dtype) on ragged varlen batches (seqlens 0 and 1), causal
// masks of both alignments, a sliding window, GQA, d 64/128, fp16/bf16, atomic and deterministic
// dQ; deterministic dQ is bitwise identical over 5 runs. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask, type AttentionLayout } from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { checkFmhaBwdProblem, fmhaBwdOperandElements, formatFmhaBwdProblem, type CheckedFmhaBwdProblem } from './fmhaBwdProblem.ts';
import { compareFmhaBwd, fmhaBwdReference } from './fmhaBwdReference.ts';
import { FmhaBwdKernel, FmhaBwdRunner, type FmhaBwdAnyInstance } from './fmhaBwdRunner.ts';
import type { FmhaBwdGpuCase } from './testing/fmhaBwdGpuCase.ts';

const buildKernel = buildOncePerInstance((instance: FmhaBwdAnyInstance) => {
  const compiler = gpuTestCompiler('fmha-bwd-gpu');
  return FmhaBwdKernel.build(instance, { device: Device.open(0), compiler });
}) as <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

interface Case extends FmhaBwdGpuCase {
  readonly layout?: AttentionLayout;
  readonly deterministic: boolean;
  /** Deterministic cases: runs whose dQ must be bitwise identical. */
  readonly repeats?: number;
}

function problemOf(c: Case): CheckedFmhaBwdProblem {
  const group = Array.isArray(c.sq);
  const common = {
    dtype: c.dtype,
    batch: c.batch,
    nheadQ: c.h,
    nheadK: c.hk ?? c.h,
    hdimQ: c.d,
    mask: c.mask,
    deterministic: c.deterministic,
    inputLayout: c.layout ?? 'bhsd',
    outputLayout: c.layout ?? 'bhsd',
  } as const;
  return checkFmhaBwdProblem(
    group
      ? { ...common, seqstartQ: starts(c.sq as readonly number[]), seqstartK: starts(c.sk as readonly number[]) }
      : { ...common, seqlenQ: c.sq as number, seqlenK: c.sk as number },
  );
}

async function runCase(c: Case): Promise<string> {
  const p = problemOf(c);
  const elems = fmhaBwdOperandElements(p);
  // At least one element each: an empty operand still uploads a (one-element) buffer.
  const fill = (count: number, seed: number): Uint16Array => randomBits16(p.dtype, Math.max(1, count), seed);
  const data = {
    q: fill(elems.q, 1 + elems.q),
    k: fill(elems.k, 2 + elems.k),
    v: fill(elems.v, 3 + elems.v),
    dO: fill(elems.dO, 4 + elems.dO),
  };
  const ref = fmhaBwdReference(p, data);
  const device = Device.open(0);
  const runner = await FmhaBwdRunner.create(p, { device, compiler: gpuTestCompiler('fmha-bwd-gpu'), buildKernel });
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
  const bits = (b: { copyToHost(): Uint8Array }): Uint16Array => {
    const x = b.copyToHost();
    return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
  };
  // The workspace starts as NaN (0xff bytes): dq_acc splits the launcher does not zero must all be
  // written by dq_dk_dv before convert_dq reads them, or dQ comes out NaN. (compute-sanitizer's
  // initcheck does not count dq_dk_dv's TMA bulk stores as initialization; this check does.)
  const workspace = runner.workspaceSize.total > 0 ? device.alloc(runner.workspaceSize.total).fill(0xff) : undefined;
  try {
    if (workspace !== undefined) runner.prepareWorkspace(workspace);
    const run = runner.prepare(bufs);
    run.launch();
    const dQ = bits(bufs.dQ);
    const results = compareFmhaBwd(p, ref, { dQ, dK: bits(bufs.dK), dV: bits(bufs.dV) });
    for (const r of results)
      assert.equal(r.wrong, 0, `${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`);
    let repeatNote = '';
    if (c.repeats !== undefined) {
      for (let i = 1; i < c.repeats; i++) {
        bufs.dQ.fill(0xff);
        run.launch();
        const again = bits(bufs.dQ);
        const diff = again.findIndex((x, j) => x !== dQ[j]);
        assert.equal(diff, -1, `deterministic dQ differs between run 1 and run ${i + 1} at element ${diff}`);
      }
      repeatNote = `; dQ bitwise identical over ${c.repeats} runs`;
    }
    return `${runner.instances.map((i) => i.name).join(' + ')}: ${results.map((r) => `${r.tensor} max |err| ${r.maxAbsErr.toExponential(2)}`).join(', ')}${repeatNote}`;
  } finally {
    device.synchronize();
    for (const b of Object.values(bufs)) b.dispose();
    workspace?.dispose();
    runner.dispose();
  }
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
    console.log(await runCase(c));
  });
}
