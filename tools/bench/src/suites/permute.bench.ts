// Bench entry (bundled by tools/device/pack.mjs as .device/bench-permute.mjs; run by run-on-gpu.sh):
//   node .device/bench-permute.mjs --out DIR      writes DIR/permute.json (docs/benchmarks.md format)
import { runBenchEntry } from '../benchEntry.ts';
import { permuteSuite } from './permute.ts';

await runBenchEntry(() => permuteSuite(), [{ key: 'torch-copy', label: 'torch copy' }]);
