// Development probe (not the recorded suite): FFPA's sm_90a forward alone (FfpaRunner) at B=1 H=32
// N=8192 bf16, no mask, for the head dims given, on the default plan or column slices (`--slices`),
// timed back to back on pseudo-random inputs, no validation — for comparing kernel variants within one
// GPU call.
//   node .device/bench-_ffpaFwdProbe.mjs [--slices] [d ...]        (default: 512 1024)
import { checkFfpaProblem, FfpaRunner } from '@tilekit/kernel-ffpa';
import { fmhaFwdProblemFlops } from '@tilekit/fmha';
import { summarizeTimes } from '@tilekit/host';
import { Device, NvccCompiler, timeLaunches } from '@tilekit/runtime';
import { probeBf16 } from './probeBf16.ts';

const device = Device.open(0);
const compiler = new NvccCompiler();
const slices = process.argv.includes('--slices');
const dims = process.argv
  .slice(2)
  .filter((a) => a !== '--slices')
  .map(Number);
const seqlen = 8192;
const heads = 32;

for (const d of dims.length > 0 ? dims : [512, 1024]) {
  const problem = checkFfpaProblem({ dtype: 'bf16', batch: 1, nheadQ: heads, hdimQ: d, seqlenQ: seqlen, seqlenK: seqlen });
  const runner = await FfpaRunner.create(problem, { device, compiler, ...(slices ? { clusters: false } : {}) });
  const n = heads * seqlen * d;
  const bufs = {
    q: device.upload(probeBf16(n, 1)),
    k: device.upload(probeBf16(n, 2)),
    v: device.upload(probeBf16(n, 3)),
    o: device.alloc(n * 2),
  };
  const prepared = runner.prepare(bufs);
  const s = summarizeTimes(timeLaunches(device, () => prepared.launch(), { warmup: 2, repeat: 10 }));
  const tflops = fmhaFwdProblemFlops(problem) / (s.median * 1e9);
  const variant = process.env['TK_PROBE'] ?? 'base';
  const plan = runner.plan.description.replace(/^d\d+ dv\d+: /, '');
  console.log(
    `probe ${variant} fwd d${d}: ${s.median.toFixed(2)} ms (min ${s.min.toFixed(2)} max ${s.max.toFixed(2)}) ${tflops.toFixed(1)} TFLOP/s — ${plan}`,
  );
  for (const b of Object.values(bufs)) b.dispose();
  runner.dispose();
}
