// Bench entry (bundled by tools/device/pack.mjs as .device/bench-sparge.mjs; run by run-on-gpu.sh):
//   node .device/bench-sparge.mjs --out DIR      writes DIR/sparge.json (docs/benchmarks.md format)
// Ours is the headline (block map + sparse attention); `ours-attention-only` is the attention alone.
import { runBenchEntry } from '../benchEntry.ts';
import { spargeSuite } from './sparge.ts';

await runBenchEntry(
  () => spargeSuite(),
  [
    { key: 'ours-dense', label: 'our dense' },
    { key: 'ours-attention-only', label: 'our attention alone' },
    { key: 'torch-cudnn', label: 'torch-cudnn' },
    { key: 'torch-flash', label: 'torch-flash' },
  ],
);
