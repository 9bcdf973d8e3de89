// Bench entry (bundled by tools/device/pack.mjs as .device/bench-fmha-fwd.mjs; run by run-on-gpu.sh):
//   node .device/bench-fmha-fwd.mjs --out DIR      writes DIR/fmha-fwd.json (docs/benchmarks.md format)
import { runBenchEntry } from '../benchEntry.ts';
import { fmhaFwdSuite } from './fmhaFwd.ts';

await runBenchEntry(
  () => fmhaFwdSuite(),
  [
    { key: 'torch-flash', label: 'torch-flash' },
    { key: 'torch-cudnn', label: 'torch-cudnn' },
  ],
);
