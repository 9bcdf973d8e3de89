// Development probe (not the recorded suite): the forward instances in each consumer schedule
// (sequential, softmax-overlapped, ping-pong: policy `schedule`) on the same inputs — outputs must
// be bitwise equal (same arithmetic, other timing) — and their times.
//   node .device/bench-_overlap.mjs
import {
  causalTopLeft,
  checkFmhaFwdProblem,
  FMHA_FWD_PINGPONG_SCHEDULE,
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_SEQUENTIAL_SCHEDULE,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  noMask,
} from '@tilekit/fmha';
import { summarizeTimes } from '@tilekit/host';
import { encode } from '@tilekit/numeric';
import { Device, encodeTensorMapTiled, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';

const device = Device.open(0);
const compiler = new NvccCompiler();
const encodeMap = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);
const cases = [
  { b: 1, h: 2, s: 1000, d: 128, causal: true, time: false },
  { b: 2, h: 2, s: 259, d: 64, causal: false, time: false },
  { b: 1, h: 2, s: 777, d: 256, causal: true, time: false },
  { b: 2, h: 16, s: 8192, d: 64, causal: false, time: true },
  { b: 2, h: 16, s: 8192, d: 128, causal: false, time: true },
  { b: 2, h: 16, s: 8192, d: 128, causal: true, time: true },
  { b: 2, h: 16, s: 8192, d: 256, causal: false, time: true },
  { b: 2, h: 16, s: 16384, d: 128, causal: false, time: true },
];
const SCHEDULES = [FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE, FMHA_FWD_PINGPONG_SCHEDULE];
for (const c of cases) {
  const tileN = c.d === 256 ? 64 : 128;
  const problem = checkFmhaFwdProblem({
    dtype: 'fp16',
    batch: c.b,
    nheadQ: c.h,
    hdimQ: c.d,
    seqlenQ: c.s,
    seqlenK: c.s,
    mask: c.causal ? causalTopLeft : noMask,
    lse: true,
  });
  const n = c.b * c.h * c.s * c.d;
  const bits = new Uint16Array(n);
  for (let i = 0; i < n; i++) bits[i] = encode('fp16', (((i * 2654435761) >>> 0) % 2000) / 1000 - 1);
  const q = device.upload(bits);
  const outs = SCHEDULES.map(() => device.alloc(n * 2));
  const lses = SCHEDULES.map(() => device.alloc(c.b * c.h * c.s * 4));
  const ms: number[] = [];
  for (const [i, schedule] of SCHEDULES.entries()) {
    const inst = new FmhaFwdInstance({
      dtype: 'fp16',
      headDim: c.d,
      headDimV: c.d,
      tileM: 128,
      tileN,
      stages: 2,
      ...FMHA_FWD_REGISTER_SPLIT,
      mask: c.causal ? 'window' : 'none',
      splitKv: false,
      schedule,
    });
    const kernel = await FmhaFwdKernel.build(inst, { device, compiler });
    const l = kernel.prepare(problem, { q, k: q, v: q, o: outs[i]!, lse: lses[i]! }, encodeMap);
    l.launch();
    device.synchronize();
    ms.push(c.time ? summarizeTimes(timeLaunches(device, () => l.launch(), { warmup: 3, repeat: 20 })).median : 0);
  }
  const os = outs.map((o) => new Uint16Array(o.copyToHost().buffer));
  const ls = lses.map((o) => new Uint32Array(o.copyToHost().buffer));
  const diffs = SCHEDULES.map((_, i) => countDiffs(os[0]!, os[i]!) + countDiffs(ls[0]!, ls[i]!));
  const flops = 4 * c.b * c.h * c.s * c.s * c.d * (c.causal ? 0.5 : 1);
  const parts = SCHEDULES.map(
    (sch, i) =>
      `${sch.tag} ${diffs[i] === 0 ? 'bitwise equal' : `${diffs[i]} DIFFERENT values`}` +
      (c.time ? ` ${ms[i]!.toFixed(3)} ms (${(flops / ms[i]! / 1e9).toFixed(0)} TF, ${(ms[0]! / ms[i]!).toFixed(3)}×)` : ''),
  );
  console.log(`b${c.b} h${c.h} s${c.s} d${c.d}${c.causal ? ' causal' : ''}: ${parts.join('; ')}`);
  for (const x of [q, ...outs, ...lses]) x.dispose();
}

function countDiffs(a: Uint16Array | Uint32Array, b: Uint16Array | Uint32Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}
