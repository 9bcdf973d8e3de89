// Bench entry (bundled by tools/device/pack.mjs as .device/bench-dsa.mjs; run by run-on-gpu.sh):
//   node .device/bench-dsa.mjs --out DIR      writes DIR/dsa.json (docs/benchmarks.md format)
// Figures are TFLOP/s with FlashMLA's count, 2·Σ(valid index entries)·h_q·(576 + 512), for ours and torch-gather.
import { runBenchEntry } from '../benchEntry.ts';
import { dsaSuite } from './dsa.ts';

await runBenchEntry(() => dsaSuite(), [{ key: 'torch-gather', label: 'torch gather' }]);
