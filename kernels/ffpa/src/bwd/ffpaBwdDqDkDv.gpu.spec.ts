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
  fmhaBwdTraitsOf,
  makeFmhaBwdWorkspace,
  noMask,
  slidingWindowMask,
  type FmhaBwdArgs,
} from '@tilekit/fmha';
import {
  checkFmhaBwdGradients,
  disposeFmhaBwdBuffers,
  fmhaBwdDqDkDvBuffers,
  fmhaBwdDqDkDvKernelLoader,
  fmhaBwdDqFrom,
  fmhaBwdReferenceCase,
  runFmhaBwdDqDkDv,
  type FmhaBwdReferenceCaseSpec,
} from '@tilekit/fmha-launch/testing';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { ffpaBwdInstance } from './ffpaBwdCatalog.ts';
import type { FfpaBwdInstance } from './ffpaBwdInstance.ts';
import { packFfpaBwdDqDkDv } from './ffpaBwdLauncher.ts';

const kernelFor = fmhaBwdDqDkDvKernelLoader<FfpaBwdInstance>(() => gpuTestCompiler('ffpa-bwd-gpu'));

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
  const group = p.mode === 'group';
  const bufs = fmhaBwdDqDkDvBuffers(device, rc, image);
  try {
    const tensor = (name: 'q' | 'k' | 'v' | 'dO' | 'dK' | 'dV', ptr: bigint) => ({ ptr, strides: p.strides[name] });
    const args: FmhaBwdArgs = {
      q: tensor('q', bufs.q.ptr),
      k: tensor('k', bufs.k.ptr),
      v: tensor('v', bufs.v.ptr),
      o: { ptr: 0n, strides: p.strides.o },
      dO: tensor('dO', bufs.dO.ptr),
      lse: { ptr: bufs.lse.ptr, strides: p.lseStrides },
      d: { ptr: bufs.d.ptr, strides: p.lseStrides },
      dQ: { ptr: 0n, strides: p.strides.dQ },
      dK: tensor('dK', bufs.dk.ptr),
      dV: tensor('dV', bufs.dv.ptr),
      ...(group ? { seqstartQ: bufs.sq!.ptr, seqstartK: bufs.sk!.ptr } : {}),
      scale: p.scale,
      workspace: bufs.ws.ptr,
    };
    const l = packFfpaBwdDqDkDv(instance, traits, args);
    const { dK, dV, acc } = runFmhaBwdDqDkDv(loaded, l, l.args, bufs, ws.dqAccOffset, ws.dqAccElements);
    // dq_acc: per batch [nheadQ][1 split][sq_b][d] (group mode at the batch's offset).
    const dQ = fmhaBwdDqFrom(
      rc,
      (b, h, r, x) => acc[(group ? ws.dqAccOffsets[b]! : b * p.nheadQ * p.rowsQ * p.hdimQ) + (h * rc.sqs[b]! + r) * p.hdimQ + x]!,
    );
    return checkFmhaBwdGradients(rc, { dQ, dK, dV }, instance.name);
  } finally {
    disposeFmhaBwdBuffers(bufs);
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
