// Development probe (not the recorded suite): times the large-head-dim forward instances (Q·Kᵀ in
// head-dim chunks, O split across two warpgroup groups) at B=1 H=32 N=8192, the shape of the FFPA
// issue's anchors (its numerics are fmhaFwdLargeHead.gpu.spec.ts's). Three timings of 10 launches each.
//   node .device/bench-_largeHead.mjs
import { FMHA_FWD_SEQUENTIAL_SCHEDULE, noMask, packedAttentionStrides, type FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { summarizeTimes } from '@tilekit/host';
import { encode } from '@tilekit/numeric';
import { Device, encodeTensorMapTiled, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { FmhaFwdInstance } from './fmhaFwdInstance.ts';
import { FMHA_FWD_LARGE_HEAD_CATALOG } from './fmhaFwdLargeHeadCatalog.ts';
import { FmhaFwdKernel } from './fmhaFwdLauncher.ts';

const device = Device.open(0);
const compiler = new NvccCompiler();
const encodeMap = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);
// The catalog's shared-P instances (softmax-overlapped) and the same in the sequential schedule.
const timed = FMHA_FWD_LARGE_HEAD_CATALOG.filter(
  (i) => i.policy.mask === 'none' && i.policy.dtype === 'bf16' && i.policy.outputSplit?.tag === 'shareP',
).flatMap((i) => [i, new FmhaFwdInstance({ ...i.policy, schedule: FMHA_FWD_SEQUENTIAL_SCHEDULE })]);
for (const inst of timed) {
  const { dtype, headDim: d, headDimV: dv } = inst.policy;
  const [b, h, s] = [1, 32, 8192];
  const problem: FmhaFwdLaunchProblem = {
    dtype,
    mode: 'batch',
    batch: b,
    nheadQ: h,
    nheadK: h,
    hdimQ: d,
    hdimV: dv,
    seqlenQ: s,
    seqlenK: s,
    rowsQ: s,
    rowsK: s,
    qStrides: packedAttentionStrides('bhsd', h, s, d),
    kStrides: packedAttentionStrides('bhsd', h, s, d),
    vStrides: packedAttentionStrides('bhsd', h, s, dv),
    oStrides: packedAttentionStrides('bhsd', h, s, dv),
    lse: true,
    lseStrides: { batch: h * s, head: s },
    scale: 1 / Math.sqrt(d),
    mask: noMask,
    numSplits: 1,
  };
  const fill = (n: number, seed: number) => {
    const bits = new Uint16Array(n);
    for (let i = 0; i < n; i++) bits[i] = encode(dtype, ((((i + seed) * 2654435761) >>> 0) % 2000) / 1000 - 1);
    return device.upload(bits);
  };
  const q = fill(b * h * s * d, 1);
  const k = fill(b * h * s * d, 2);
  const v = fill(b * h * s * dv, 3);
  const o = device.alloc(b * h * s * dv * 2);
  const lse = device.alloc(b * h * s * 4);
  const kernel = await FmhaFwdKernel.build(inst, { device, compiler });
  const l = kernel.prepare(problem, { q, k, v, o, lse }, encodeMap);
  const flops = 2 * b * h * s * s * (d + dv);
  const ms = [0, 1, 2].map(() => summarizeTimes(timeLaunches(device, () => l.launch(), { warmup: 2, repeat: 10 })).median);
  console.log(
    `${inst.name} (${inst.policy.schedule?.tag ?? 'sequential'}): b${b} h${h} s${s}: ` +
      ms.map((m) => `${m.toFixed(2)} ms (${(flops / m / 1e9).toFixed(0)} TF)`).join(', '),
  );
  for (const x of [q, k, v, o, lse]) x.dispose();
}
