// Bench entry (bundled by tools/device/pack.mjs as .device/bench-dsaIndexer.mjs; run by run-on-gpu.sh):
//   node .device/bench-dsaIndexer.mjs --out DIR      writes DIR/dsa-indexer.json (docs/benchmarks.md format)
// Figures are GB/s (decode: the index cache read; topk: the logits read; prefill: bytes moved, with its
// TFLOP/s in the record); hbm-read is torch.sum's read bandwidth, the yardstick of ours.hbmFraction.
import { runBenchEntry } from '../benchEntry.ts';
import { dsaIndexerSuite } from './dsaIndexer.ts';

await runBenchEntry(
  () => dsaIndexerSuite(),
  [
    { key: 'torch-bf16', label: 'torch-bf16' },
    { key: 'torch-fp8-rowwise', label: 'torch-fp8-rowwise' },
    { key: 'torch-topk', label: 'torch.topk' },
    { key: 'hbm-read', label: 'HBM read' },
  ],
);
