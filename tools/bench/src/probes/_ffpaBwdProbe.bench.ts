// Development probe (not the recorded suite): FFPA's sm_90a backward alone (FfpaBwdRunner: dot_do_o,
// dq_dk_dv, convert_dq) at B=1 H=32 N=8192 bf16 for the head dims given, timed back to back on
// pseudo-random inputs, no validation — for comparing kernel variants within one GPU call.
//   node .device/bench-_ffpaBwdProbe.mjs [--deterministic] [d ...]        (default: 512 1024)
import { fmhaBwdProblemFlops, noMask } from '@tilekit/fmha';
import { buildFmhaBwdKernelsOnce } from '@tilekit/fmha-launch';
import { summarizeTimes } from '@tilekit/host';
import { FfpaBwdRunner } from '@tilekit/kernel-ffpa';
import { Device, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { probeBf16 } from './probeBf16.ts';

const device = Device.open(0);
const compiler = new NvccCompiler();
const buildKernel = buildFmhaBwdKernelsOnce({ device, compiler });
const deterministic = process.argv.includes('--deterministic');
const dims = process.argv
  .slice(2)
  .filter((a) => a !== '--deterministic')
  .map(Number);
const seqlen = 8192;
const heads = 32;

for (const d of dims.length > 0 ? dims : [512, 1024]) {
  const problem = {
    dtype: 'bf16',
    batch: 1,
    nheadQ: heads,
    hdimQ: d,
    seqlenQ: seqlen,
    seqlenK: seqlen,
    mask: noMask,
    deterministic,
  } as const;
  const runner = await FfpaBwdRunner.create(problem, { device, compiler, buildKernel });
  const n = heads * seqlen * d;
  const input = (seed: number) => device.upload(probeBf16(n, seed));
  const lse = device.upload(new Float32Array(heads * seqlen).fill(9));
  const bufs = {
    q: input(1),
    k: input(2),
    v: input(3),
    o: input(4),
    dO: input(5),
    lse,
    dQ: device.alloc(n * 2),
    dK: device.alloc(n * 2),
    dV: device.alloc(n * 2),
  };
  const prepared = runner.prepare(bufs);
  const times = timeLaunches(device, () => prepared.launch(), { warmup: 2, repeat: 6 });
  const s = summarizeTimes(times);
  const tflops = fmhaBwdProblemFlops(runner.problem) / (s.median * 1e9);
  const variant = `${process.env['TK_PROBE'] ?? 'base'}${deterministic ? ' deterministic' : ''}`;
  console.log(
    `probe ${variant} d${d}: ${s.median.toFixed(2)} ms (min ${s.min.toFixed(2)} max ${s.max.toFixed(2)}) ${tflops.toFixed(1)} TFLOP/s`,
  );
  for (const b of Object.values(bufs)) b.dispose();
  runner.dispose();
}
