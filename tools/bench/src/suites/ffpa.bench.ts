// Bench entry (bundled by tools/device/pack.mjs as .device/bench-ffpa.mjs; run by run-on-gpu.sh):
//   node .device/bench-ffpa.mjs --out DIR      writes DIR/ffpa.json (docs/benchmarks.md format)
import { runBenchEntry } from '../benchEntry.ts';
import { ffpaSuite } from './ffpa.ts';

await runBenchEntry(() => ffpaSuite(), [{ key: 'torch-efficient', label: 'torch-efficient' }]);
