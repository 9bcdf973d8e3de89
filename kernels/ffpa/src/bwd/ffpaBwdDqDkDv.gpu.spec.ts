// GPU tests of FFPA's backward dq_dk_dv kernel alone (node:test): dQ (the fp32 workspace, atomic
// layout of @tilekit/fmha's makeFmhaBwdWorkspace), dK and dV against the fp32 CPU reference, LSE from
// the forward reference and D = rowsum(dO ∘ O) given: head dims 320 … 1024 and 576/512 (column
// slices of 128, the last one partial or without dV columns), ragged lengths 1, 17, 127, 259, 1000,
// causal masks of both alignments with fully masked rows, a sliding window, GQA, group mode with
// empty sequences. Skipped (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  causalBottomRight,
  causalTopLeft,
  checkFmhaBwdTraits,
  makeFmhaBwdWorkspace,
  noMask,
  slidingWindowMask,
  type FmhaBwdArgs,
} from '@tilekit/fmha';
import { checkFmhaBwdGradients, fmhaBwdReferenceCase, type FmhaBwdReferenceCaseSpec } from '@tilekit/fmha-launch/testing';
import { buildOncePerInstance, Device, loadInstance, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { ffpaBwdInstance } from './ffpaBwdCatalog.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { packFfpaBwdDqDkDv } from './ffpaBwdLauncher.ts';

const kernelFor = buildOncePerInstance(async (instance: FfpaBwdInstance) => {
  const compiler = gpuTestCompiler('ffpa-bwd-gpu');
  const loaded = await loadInstance(instance, { device: Device.open(0), compiler, flags: ['-std=c++17', '-lineinfo'] });
  loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
  return loaded;
});

interface Case extends FmhaBwdReferenceCaseSpec {
  readonly label: string;
}

/** The traits of a case (as the runner will check them): its shapes, sequences and mask. */
function traitsOf(c: Case, rc: ReturnType<typeof fmhaBwdReferenceCase>) {
  return checkFmhaBwdTraits({
    seqlenQ: rc.rowsQ,
    seqlenK: rc.rowsK,
    batch: c.batch,
    maxSeqlenQ: Math.max(...rc.sqs),
    maxSeqlenK: Math.max(...rc.sks),
    hdimQ: c.d,
    hdimV: rc.dv,
    nheadQ: c.h,
    nheadK: rc.hk,
    dtype: c.dtype,
    groupMode: rc.group,
    mask: c.mask,
    deterministic: false,
    ...(rc.group ? { seqstartQ: rc.seqstartQ, seqstartK: rc.seqstartK } : {}),
  });
}

async function runCase(c: Case): Promise<string> {
  const rc = fmhaBwdReferenceCase(c);
  const traits = traitsOf(c, rc);
  const instance = ffpaBwdInstance(c.dtype, c.d, rc.dv, c.mask.kind === 'none' ? 'none' : 'window');
  const ws = makeFmhaBwdWorkspace(traits, { dqAccumulation: 'atomic', kN0: instance.kN0 }, 132);
  const loaded = await kernelFor(instance);
  const device = Device.open(0);
  const image = new Uint8Array(ws.totalBytes);
  image.set(ws.hostImage());
  const bufs: Record<string, DeviceBuffer> = {
    q: device.upload(rc.q),
    k: device.upload(rc.k),
    v: device.upload(rc.v),
    dO: device.upload(rc.dO),
    lse: device.upload(Float32Array.from(rc.fwd.lse)),
    d: device.upload(Float32Array.from(rc.ref.d)),
    dk: device.alloc(rc.k.length * 2).fill(0xff),
    dv: device.alloc(rc.v.length * 2).fill(0xff),
    ws: device.upload(image),
    ...(rc.group ? { sq: device.upload(new Int32Array(rc.seqstartQ)), sk: device.upload(new Int32Array(rc.seqstartK)) } : {}),
  };
  try {
    const rows = { batch: c.h * rc.rowsQ, head: rc.rowsQ };
    const args: FmhaBwdArgs = {
      q: { ptr: bufs.q!.ptr, strides: rc.qs },
      k: { ptr: bufs.k!.ptr, strides: rc.ks },
      v: { ptr: bufs.v!.ptr, strides: rc.vs },
      o: { ptr: 0n, strides: rc.os },
      dO: { ptr: bufs.dO!.ptr, strides: rc.os },
      lse: { ptr: bufs.lse!.ptr, strides: rows },
      d: { ptr: bufs.d!.ptr, strides: rows },
      dQ: { ptr: 0n, strides: rc.qs },
      dK: { ptr: bufs.dk!.ptr, strides: rc.ks },
      dV: { ptr: bufs.dv!.ptr, strides: rc.vs },
      ...(rc.group ? { seqstartQ: bufs.sq!.ptr, seqstartK: bufs.sk!.ptr } : {}),
      scale: Math.fround(rc.scale),
      workspace: bufs.ws!.ptr,
    };
    const l = packFfpaBwdDqDkDv(instance, traits, args);
    loaded.kernel.launch({ grid: l.grid, block: l.block, sharedBytes: l.sharedBytes }, l.args);
    const dk = new Uint16Array(bufs.dk!.copyToHost().buffer);
    const dv = new Uint16Array(bufs.dv!.copyToHost().buffer);
    const acc = new Float32Array(bufs.ws!.copyToHost().buffer, ws.dqAccOffset, ws.dqAccElements);
    // dq_acc: per batch [nheadQ][1 split][sq_b][d] (group mode at the batch's offset).
    const dqAt = (b: number, h: number, r: number, x: number): number =>
      acc[(rc.group ? ws.dqAccOffsets[b]! : b * c.h * rc.rowsQ * c.d) + (h * rc.sqs[b]! + r) * c.d + x]!;
    const { bad, first, worst } = checkFmhaBwdGradients(rc, { dq: dqAt, dk, dv });
    assert.equal(bad, 0, `${instance.name}: ${bad} values off; first: ${first}`);
    return `${instance.name}: max |err| dQ ${worst.dq.toExponential(2)} dK ${worst.dk.toExponential(2)} dV ${worst.dv.toExponential(2)}`;
  } finally {
    for (const buf of Object.values(bufs)) buf.dispose();
  }
}

const cases: readonly Case[] = [
  { label: 'bf16 d320 causal s259 GQA 4:1', dtype: 'bf16', d: 320, batch: 1, h: 4, hk: 1, sq: 259, sk: 259, mask: causalTopLeft },
  { label: 'fp16 d512 no mask b2 h2 s127', dtype: 'fp16', d: 512, batch: 2, h: 2, sq: 127, sk: 127, mask: noMask },
  {
    label: 'bf16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:2',
    dtype: 'bf16',
    d: 576,
    dv: 512,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 100,
    mask: causalBottomRight,
  },
  {
    label: 'fp16 d384 window t:40,3 varlen q 17,0,127 k 300,5,127',
    dtype: 'fp16',
    d: 384,
    batch: 3,
    h: 2,
    sq: [17, 0, 127],
    sk: [300, 5, 127],
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'bf16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259',
    dtype: 'bf16',
    d: 1024,
    batch: 4,
    h: 2,
    sq: [17, 0, 127, 1],
    sk: [17, 3, 127, 259],
    mask: causalTopLeft,
  },
  { label: 'fp16 d704 no mask s1 sk1000', dtype: 'fp16', d: 704, batch: 1, h: 1, sq: 1, sk: 1000, mask: noMask },
];

for (const c of cases) {
  test(`kernel-ffpa/gpu bwd dq_dk_dv: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}
