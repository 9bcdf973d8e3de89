// Development probe (not the recorded suite): times the dq_dk_dv kernel alone at the shapes.
//   node .device/bench-_dqDkDv.mjs
import { summarizeTimes } from '@tilekit/host';
import { encode } from '@tilekit/numeric';
import { checkTiledTensorMap, Device, encodeTensorMapTiled, loadInstance, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { dqAccHeadBytes, FmhaBwdDqDkDvInstance } from './fmhaBwdDqDkDvInstance.ts';

const device = Device.open(0);
const compiler = new NvccCompiler();
for (const [d, causal, dqMode, tileM] of [
  [64, false, 'atomic', 64],
  [64, false, 'atomic', 128],
  [64, true, 'atomic', 64],
  [64, true, 'atomic', 128],
  [64, false, 'split', 128],
] as const) {
  const b = 2;
  const h = 16;
  const s = 8192;
  const instance = new FmhaBwdDqDkDvInstance({
    dtype: 'fp16',
    headDim: d,
    headDimV: d,
    tileN: 128,
    tileM,
    stages: 2,
    producerRegisters: 24,
    consumerRegisters: 240,
    mask: causal ? 'window' : 'none',
    dqMode,
  });
  const loaded = await loadInstance(instance, { device, compiler, flags: ['-std=c++17', '-lineinfo'] });
  loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
  const n = b * h * s * d;
  const bits = new Uint16Array(n);
  for (let i = 0; i < n; i++) bits[i] = encode('fp16', ((i * 2654435761) % 1000) / 1000 - 0.5);
  const q = device.upload(bits);
  const lse = device.upload(new Float32Array(b * h * s).fill(8));
  const dd = device.upload(new Float32Array(b * h * s));
  const dk = device.alloc(n * 2);
  const dv = device.alloc(n * 2);
  const nsplits = dqMode === 'split' ? s / 128 : 1;
  const head = dqAccHeadBytes(b, false, dqMode === 'split');
  const ws = device.alloc(head + b * h * nsplits * s * d * 4).fill(0);
  const strides = { row: d, head: s * d, batch: h * s * d };
  const map = (box: readonly number[]) => ({
    dtype: 'float16' as const,
    swizzle: '128B' as const,
    oobFill: 'zero' as const,
    l2Promotion: '128B' as const,
    address: q.ptr,
    globalDims: [d, s, h, b],
    globalStrides: [strides.row * 2, strides.head * 2, strides.batch * 2],
    boxDims: [...box],
  });
  const qm = map(instance.tmaBoxes.q);
  const km = map(instance.tmaBoxes.kv);
  checkTiledTensorMap(qm);
  const scale = 1 / Math.sqrt(d);
  // nsplits lives at the workspace head: write it there.
  const headBuf = new Uint8Array(head);
  new Int32Array(headBuf.buffer, 0, 1)[0] = nsplits;
  ws.copyFromHost(headBuf);
  const args = instance.signature.pack({
    q_map: encodeTensorMapTiled(device, qm),
    k_map: encodeTensorMapTiled(device, km),
    v_map: encodeTensorMapTiled(device, km),
    do_map: encodeTensorMapTiled(device, qm),
    lse: lse.ptr,
    d: dd.ptr,
    lse_stride_head: s,
    lse_stride_batch: h * s,
    dk: dk.ptr,
    dv: dv.ptr,
    dk_stride_row: d,
    dk_stride_head: s * d,
    dk_stride_batch: h * s * d,
    dv_stride_row: d,
    dv_stride_head: s * d,
    dv_stride_batch: h * s * d,
    workspace: ws.ptr,
    batch: b,
    nhead_q: h,
    nhead_ratio: 1,
    seqlen_q: s,
    seqlen_k: s,
    seqstart_q: 0n,
    seqstart_k: 0n,
    seqlen_k_ptr: 0n,
    scale: Math.fround(scale),
    scale_log2: Math.fround(scale) * Math.LOG2E,
    mask_left: -1,
    mask_right: 0,
    mask_top_left: 1,
  });
  const launch = instance.launch(s / 128, h, b);
  const ms = summarizeTimes(
    timeLaunches(device, () => loaded.kernel.launch({ grid: launch.grid, block: launch.block, sharedBytes: launch.sharedBytes }, args), {
      warmup: 3,
      repeat: 20,
    }),
  ).median;
  device.synchronize();
  const flops = 2.5 * 4 * b * h * s * s * d * (causal ? 0.5 : 1);
  console.log(
    `${instance.name}: ${ms.toFixed(3)} ms, ${(flops / ms / 1e9).toFixed(1)} TFLOP/s ` +
      `(dq_dk_dv alone; ${loaded.compiled.resources.registers} regs, spills ` +
      `${loaded.compiled.resources.spillStores})`,
  );
  for (const x of [q, lse, dd, dk, dv, ws]) x.dispose();
}
