// Bench entry (bundled by tools/device/pack.mjs as .device/bench-fmha-bwd.mjs; run by run-on-gpu.sh):
//   node .device/bench-fmha-bwd.mjs --out DIR      writes DIR/fmha-bwd.json (docs/benchmarks.md format)
import { runBenchEntry } from '../benchEntry.ts';
import { fmhaBwdSuite } from './fmhaBwd.ts';

await runBenchEntry(
  () => fmhaBwdSuite(),
  [
    { key: 'torch-flash', label: 'torch-flash' },
    { key: 'torch-cudnn', label: 'torch-cudnn' },
  ],
);
