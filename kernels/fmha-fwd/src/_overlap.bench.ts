// Development probe (not the recorded suite): the forward instances with and without the
// intra-warpgroup overlap (policy overlapSoftmax) on the same inputs — outputs must be bitwise equal
// (same arithmetic, other timing) — and their times.
//   node .device/bench-_overlap.mjs
import { causalTopLeft, noMask, FMHA_FWD_REGISTER_SPLIT, checkFmhaFwdProblem } from '@tilekit/fmha';
import { summarizeTimes } from '@tilekit/host';
import { encode } from '@tilekit/numeric';
import { Device, encodeTensorMapTiled, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { FmhaFwdInstance } from './fmhaFwdInstance.ts';
import { FmhaFwdKernel } from './fmhaFwdLauncher.ts';

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
  const outs = [device.alloc(n * 2), device.alloc(n * 2)];
  const lses = [device.alloc(c.b * c.h * c.s * 4), device.alloc(c.b * c.h * c.s * 4)];
  const ms: number[] = [];
  for (const [i, overlapSoftmax] of [false, true].entries()) {
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
      overlapSoftmax,
    });
    const kernel = await FmhaFwdKernel.build(inst, { device, compiler });
    const l = kernel.prepare(problem, { q, k: q, v: q, o: outs[i]!, lse: lses[i]! }, encodeMap);
    l.launch();
    device.synchronize();
    ms.push(c.time ? summarizeTimes(timeLaunches(device, () => l.launch(), { warmup: 3, repeat: 20 })).median : 0);
  }
  const [o0, o1] = outs.map((o) => new Uint16Array(o.copyToHost().buffer));
  const [l0, l1] = lses.map((o) => new Uint32Array(o.copyToHost().buffer));
  let diffs = 0;
  for (let i = 0; i < o0!.length; i++) if (o0![i] !== o1![i]) diffs++;
  for (let i = 0; i < l0!.length; i++) if (l0![i] !== l1![i]) diffs++;
  const flops = 4 * c.b * c.h * c.s * c.s * c.d * (c.causal ? 0.5 : 1);
  console.log(
    `b${c.b} h${c.h} s${c.s} d${c.d}${c.causal ? ' causal' : ''}: ` +
      `${diffs === 0 ? 'bitwise equal' : `${diffs} DIFFERENT values`}` +
      (c.time
        ? `; plain ${ms[0]!.toFixed(3)} ms (${(flops / ms[0]! / 1e9).toFixed(0)} TF), overlap ` +
          `${ms[1]!.toFixed(3)} ms (${(flops / ms[1]! / 1e9).toFixed(0)} TF) = ` +
          `${(ms[0]! / ms[1]!).toFixed(3)}×`
        : ''),
  );
  for (const x of [q, ...outs, ...lses]) x.dispose();
}
