// GPU tests of FFPA's backward dq_dk_dv kernel alone (node:test): dQ (the fp32 workspace, atomic
// layout of @tilekit/fmha's makeFmhaBwdWorkspace), dK and dV against the fp32 CPU reference, LSE from
// the forward reference and D = rowsum(dO ∘ O) given: head dims 320 … 1024 and 576/512 (column
// slices of 128, the last one partial or without dV columns), ragged lengths 1, 17, 127, 259, 1000,
// causal masks of both alignments with fully masked rows, a sliding window, GQA, group mode with
// empty sequences. Skipped (loudly, by the runner) without a GPU.
import { test } from 'node:test';
import {
  causalBottomRight,
  causalTopLeft,
  checkFmhaBwdTraits,
  fmhaBwdOperandElements,
  fmhaBwdTraitsOf,
  makeFmhaBwdWorkspace,
  noMask,
  slidingWindowMask,
  type FmhaBwdArgs,
} from '@tilekit/fmha';
import { checkFmhaBwdGradients, fmhaBwdDqFrom, fmhaBwdReferenceCase, type FmhaBwdReferenceCaseSpec } from '@tilekit/fmha-launch/testing';
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

async function runCase(c: Case): Promise<string> {
  const rc = fmhaBwdReferenceCase(c);
  const p = rc.problem;
  const traits = checkFmhaBwdTraits(fmhaBwdTraitsOf(p));
  const instance = ffpaBwdInstance(c.dtype, p.hdimQ, p.hdimV, p.mask.kind === 'none' ? 'none' : 'window');
  const ws = makeFmhaBwdWorkspace(traits, { dqAccumulation: 'atomic', kN0: instance.kN0 }, 132);
  const loaded = await kernelFor(instance);
  const device = Device.open(0);
  const image = new Uint8Array(ws.totalBytes);
  image.set(ws.hostImage());
  const e = fmhaBwdOperandElements(p);
  const group = p.mode === 'group';
  const bufs: Record<string, DeviceBuffer> = {
    q: device.upload(rc.data.q),
    k: device.upload(rc.data.k),
    v: device.upload(rc.data.v),
    dO: device.upload(rc.data.dO),
    lse: device.upload(rc.ref.lse),
    d: device.upload(Float32Array.from(rc.ref.result.d)),
    dk: device.alloc(e.dK * 2).fill(0xff),
    dv: device.alloc(e.dV * 2).fill(0xff),
    ws: device.upload(image),
    ...(group ? { sq: device.upload(new Int32Array(p.seqstartQ)), sk: device.upload(new Int32Array(p.seqstartK)) } : {}),
  };
  try {
    const tensor = (name: 'q' | 'k' | 'v' | 'dO' | 'dK' | 'dV', ptr: bigint) => ({ ptr, strides: p.strides[name] });
    const args: FmhaBwdArgs = {
      q: tensor('q', bufs.q!.ptr),
      k: tensor('k', bufs.k!.ptr),
      v: tensor('v', bufs.v!.ptr),
      o: { ptr: 0n, strides: p.strides.o },
      dO: tensor('dO', bufs.dO!.ptr),
      lse: { ptr: bufs.lse!.ptr, strides: p.lseStrides },
      d: { ptr: bufs.d!.ptr, strides: p.lseStrides },
      dQ: { ptr: 0n, strides: p.strides.dQ },
      dK: tensor('dK', bufs.dk!.ptr),
      dV: tensor('dV', bufs.dv!.ptr),
      ...(group ? { seqstartQ: bufs.sq!.ptr, seqstartK: bufs.sk!.ptr } : {}),
      scale: p.scale,
      workspace: bufs.ws!.ptr,
    };
    const l = packFfpaBwdDqDkDv(instance, traits, args);
    loaded.kernel.launch({ grid: l.grid, block: l.block, sharedBytes: l.sharedBytes }, l.args);
    const dK = new Uint16Array(bufs.dk!.copyToHost().buffer);
    const dV = new Uint16Array(bufs.dv!.copyToHost().buffer);
    const acc = new Float32Array(bufs.ws!.copyToHost().buffer, ws.dqAccOffset, ws.dqAccElements);
    // dq_acc: per batch [nheadQ][1 split][sq_b][d] (group mode at the batch's offset).
    const dQ = fmhaBwdDqFrom(
      rc,
      (b, h, r, x) => acc[(group ? ws.dqAccOffsets[b]! : b * p.nheadQ * p.rowsQ * p.hdimQ) + (h * rc.sqs[b]! + r) * p.hdimQ + x]!,
    );
    return checkFmhaBwdGradients(rc, { dQ, dK, dV }, instance.name);
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
