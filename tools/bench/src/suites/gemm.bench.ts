// Bench entry (bundled by tools/device/pack.mjs as .device/bench-gemm.mjs; run by run-on-gpu.sh):
//   node .device/bench-gemm.mjs --out DIR      writes DIR/gemm.json (docs/benchmarks.md format)
import { runBenchEntry } from '../benchEntry.ts';
import { gemmSuite } from './gemm.ts';

await runBenchEntry(() => gemmSuite(), [{ key: 'torch-matmul', label: 'torch.matmul' }]);
