// GPU tests of the dq_dk_dv kernel alone (node:test): dQ (summed over the workspace's splits on the
// host), dK and dV against the fp64 CPU reference, on ragged shapes, masks, GQA, group mode, both dQ
// modes; LSE from the forward reference and D = rowsum(dO ∘ O) given. Skipped (loudly, by the
// runner) without a GPU.
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, seqstartsOf, slidingWindowMask, type AttentionTensorStrides } from '@tilekit/fmha';
import {
  checkFmhaBwdGradients,
  disposeFmhaBwdBuffers,
  fmhaBwdDqDkDvBuffers,
  fmhaBwdDqDkDvKernelLoader,
  fmhaBwdDqFrom,
  fmhaBwdReferenceCase,
  runFmhaBwdDqDkDv,
} from '@tilekit/fmha-launch/testing';
import { getDType } from '@tilekit/numeric';
import { checkTiledTensorMap, Device, encodeTensorMapTiled, type TiledTensorMapOptions } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { fmhaBwdTile } from './fmhaBwdCatalog.ts';
import { dqAccHeadBytes, FmhaBwdDqDkDvInstance, type FmhaBwdDqDkDvPolicy } from './fmhaBwdDqDkDvInstance.ts';
import type { FmhaBwdGpuCase } from './testing/fmhaBwdGpuCase.ts';

const kernelFor = fmhaBwdDqDkDvKernelLoader<FmhaBwdDqDkDvInstance>(() => gpuTestCompiler('fmha-bwd-gpu'));

interface Case extends FmhaBwdGpuCase {
  readonly dqMode: 'atomic' | 'split';
  /** A score modifier: soft-capping at 1.5, or ALiBi with the geometric slopes 2^(−8(h+1)/H). */
  readonly score?: 'softcap' | 'alibi';
  /** Split mode, batch mode: splits (blocks along the keys), each looping over its key tiles. */
  readonly splits?: number;
}

async function runCase(c: Case): Promise<string> {
  const rc = fmhaBwdReferenceCase(c);
  const { sqs, sks, score, problem: p } = rc;
  const group = p.mode === 'group';
  const { rowsQ, rowsK } = p;
  const [qs, ks, hk] = [p.strides.q, p.strides.k, p.nheadK];
  const d = c.d;
  const batches = group ? 1 : c.batch;
  const policy: FmhaBwdDqDkDvPolicy = {
    dtype: c.dtype,
    headDim: d,
    headDimV: d,
    ...fmhaBwdTile(d),
    producerRegisters: 24,
    consumerRegisters: 240,
    mask: c.mask.kind === 'none' ? 'none' : 'window',
    dqMode: c.dqMode,
    ...(score === undefined ? {} : { scoreModifier: score.modifier }),
  };
  const instance = new FmhaBwdDqDkDvInstance(policy);
  const loaded = await kernelFor(instance);
  const device = Device.open(0);
  // Workspace: nsplits, group-mode offsets, dq_acc [nhead, nsplits_b, seqq_b, d] per batch.
  const det = c.dqMode === 'split';
  const kvTiles = sks.map((s) => Math.ceil(s / instance.kN0));
  const nsplits = det ? (group ? kvTiles : [c.splits ?? 1]) : [1];
  const splitsOf = (b: number): number => (det && group ? nsplits[b]! : nsplits[0]!);
  const perBatch = sqs.map((s, b) => c.h * splitsOf(b) * s * d);
  const offsets = seqstartsOf(perBatch);
  const head = dqAccHeadBytes(c.batch, group, det);
  const accElems = group ? offsets[c.batch]! : c.batch * c.h * nsplits[0]! * rowsQ * d;
  const ws = new Uint8Array(head + accElems * 4);
  new Int32Array(ws.buffer, 0, nsplits.length).set(nsplits);
  if (group) new BigInt64Array(ws.buffer, Math.ceil((4 * nsplits.length) / 16) * 16, c.batch + 1).set(offsets.map(BigInt));
  const e = getDType(c.dtype).bytes;
  const dtype = c.dtype === 'fp16' ? 'float16' : 'bfloat16';
  const map = (address: bigint, s: AttentionTensorStrides, heads: number, rows: number, box: readonly number[]): TiledTensorMapOptions => ({
    dtype,
    swizzle: '128B',
    oobFill: 'zero',
    l2Promotion: '128B',
    address,
    globalDims: [d, Math.max(rows, 1), heads, batches],
    globalStrides: [s.row * e, s.head * e, (batches === 1 ? s.row : s.batch) * e],
    boxDims: [...box],
  });
  const bufs = {
    ...fmhaBwdDqDkDvBuffers(device, rc, ws),
    slopes: score?.slopes === undefined ? undefined : device.upload(score.slopes),
  };
  try {
    const maps = {
      q: map(bufs.q.ptr, qs, c.h, rowsQ, instance.tmaBoxes.q),
      k: map(bufs.k.ptr, ks, hk, rowsK, instance.tmaBoxes.kv),
      v: map(bufs.v.ptr, ks, hk, rowsK, instance.tmaBoxes.kv),
      dO: map(bufs.dO.ptr, qs, c.h, rowsQ, instance.tmaBoxes.q),
    };
    for (const m of Object.values(maps)) checkTiledTensorMap(m);
    const scale = p.scale;
    const window = c.mask.kind === 'window' ? c.mask : undefined;
    const args = instance.signature.pack({
      q_map: encodeTensorMapTiled(device, maps.q),
      k_map: encodeTensorMapTiled(device, maps.k),
      v_map: encodeTensorMapTiled(device, maps.v),
      do_map: encodeTensorMapTiled(device, maps.dO),
      lse: bufs.lse.ptr,
      d: bufs.d.ptr,
      lse_stride_head: rowsQ,
      lse_stride_batch: group ? 0 : c.h * rowsQ,
      dk: bufs.dk.ptr,
      dv: bufs.dv.ptr,
      dk_stride_row: ks.row,
      dk_stride_head: ks.head,
      dk_stride_batch: group ? 0 : ks.batch,
      dv_stride_row: ks.row,
      dv_stride_head: ks.head,
      dv_stride_batch: group ? 0 : ks.batch,
      workspace: bufs.ws.ptr,
      batch: c.batch,
      nhead_q: c.h,
      nhead_ratio: c.h / hk,
      seqlen_q: rowsQ,
      seqlen_k: rowsK,
      seqstart_q: bufs.sq?.ptr ?? 0n,
      seqstart_k: bufs.sk?.ptr ?? 0n,
      seqlen_k_ptr: 0n,
      scale: Math.fround(scale),
      scale_log2: Math.fround(scale) * Math.LOG2E,
      mask_left: window?.left ?? -1,
      mask_right: window?.right ?? -1,
      mask_top_left: window === undefined || window.alignment === 'topLeft' ? 1 : 0,
      ...(score === undefined ? {} : score.modifier.argValues(score.kernel(bufs.slopes?.ptr), c.h)),
    });
    const gridX = det ? Math.max(...nsplits, 1) : Math.max(...kvTiles, 1);
    const launch = instance.launch(gridX, hk, c.batch);
    const { dK, dV, acc } = runFmhaBwdDqDkDv(loaded, launch, args, bufs, head, accElems);
    const dQ = fmhaBwdDqFrom(rc, (b, h, r, x) => {
      const ns = splitsOf(b);
      let sum = 0;
      for (let sp = 0; sp < ns; sp++) sum += acc[(group ? offsets[b]! : b * c.h * ns * rowsQ * d) + ((h * ns + sp) * sqs[b]! + r) * d + x]!;
      return sum;
    });
    return checkFmhaBwdGradients(rc, { dQ, dK, dV }, instance.name);
  } finally {
    disposeFmhaBwdBuffers(bufs);
  }
}

const cases: readonly Case[] = [
  { label: 'fp16 d128 no mask b1 h2 s259', dtype: 'fp16', d: 128, batch: 1, h: 2, sq: 259, sk: 259, mask: noMask, dqMode: 'atomic' },
  {
    label: 'fp16 d128 causal s300 GQA 4:2',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 300,
    sk: 300,
    mask: causalTopLeft,
    dqMode: 'atomic',
  },
  {
    label: 'bf16 d64 causal bottom-right sq 259 > sk 100',
    dtype: 'bf16',
    d: 64,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 100,
    mask: causalBottomRight,
    dqMode: 'atomic',
  },
  {
    label: 'fp16 d64 window t:17,5 s127',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    sq: 127,
    sk: 127,
    mask: slidingWindowMask(17, 5),
    dqMode: 'atomic',
  },
  {
    label: 'fp16 d128 varlen q 1,0,17,259 k 17,5,0,300',
    dtype: 'fp16',
    d: 128,
    batch: 4,
    h: 2,
    sq: [1, 0, 17, 259],
    sk: [17, 5, 0, 300],
    mask: noMask,
    dqMode: 'atomic',
  },
  {
    label: 'fp16 d128 split: batch mode, 2 splits looping over 3 key tiles',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 200,
    sk: 300,
    mask: noMask,
    dqMode: 'split',
    splits: 2,
  },
  {
    label: 'bf16 d64 split: varlen causal',
    dtype: 'bf16',
    d: 64,
    batch: 3,
    h: 2,
    sq: [17, 259, 1],
    sk: [300, 259, 129],
    mask: causalBottomRight,
    dqMode: 'split',
  },
  {
    label: 'bf16 d256 causal s300 GQA 4:2 (two warpgroups share 64 key rows)',
    dtype: 'bf16',
    d: 256,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 300,
    sk: 300,
    mask: causalTopLeft,
    dqMode: 'atomic',
  },
  {
    label: 'fp16 d256 varlen q 1,0,130 k 65,7,200, window t:40,3',
    dtype: 'fp16',
    d: 256,
    batch: 3,
    h: 2,
    sq: [1, 0, 130],
    sk: [65, 7, 200],
    mask: slidingWindowMask(40, 3),
    dqMode: 'atomic',
  },
  {
    label: 'fp16 d128 soft-capping 1.5, no mask, s259 GQA 4:2',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 259,
    mask: noMask,
    dqMode: 'atomic',
    score: 'softcap',
  },
  {
    label: 'fp16 d128 soft-capping 1.5, varlen causal q 17,300 k 259,300',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: [17, 300],
    sk: [259, 300],
    mask: causalBottomRight,
    dqMode: 'atomic',
    score: 'softcap',
  },
  {
    label: 'fp16 d128 ALiBi, no mask, sq 127 sk 300',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 2,
    sq: 127,
    sk: 300,
    mask: noMask,
    dqMode: 'atomic',
    score: 'alibi',
  },
  {
    label: 'fp16 d128 ALiBi, window t:40,3, varlen q 1,259 k 300,259, GQA 4:2',
    dtype: 'fp16',
    d: 128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: [1, 259],
    sk: [300, 259],
    mask: slidingWindowMask(40, 3),
    dqMode: 'atomic',
    score: 'alibi',
  },
];

for (const c of cases) {
  test(`kernel-fmha-bwd/gpu dq_dk_dv: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}
