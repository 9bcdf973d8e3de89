// Bench entry (bundled by tools/device/pack.mjs as .device/bench-gemm.mjs; run by run-on-gpu.sh):
//   node .device/bench-gemm.mjs --out DIR      writes DIR/gemm.json (BENCHMARKS.md format)
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Device } from '@tilekit/runtime';
import { runSuite } from '../runSuite.ts';
import { gemmSuite } from './gemm.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, torch: { type: 'string' } } });
const root = process.cwd();
const manifestPath = join(root, '.device', 'manifest.json');
const manifest = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as { commit?: string; dirty?: boolean }) : {};
const commit = `${manifest.commit ?? 'unknown'}${manifest.dirty ? '+uncommitted' : ''}`;
const result = await runSuite(gemmSuite(), {
  outDir: resolve(values.out ?? join(root, '.device', 'out')),
  device: Device.open(0).name,
  commit,
  torchScript: values.torch ?? join(root, 'tools', 'bench', 'python', 'torch_reference.py'),
});
for (const c of result.cases) {
  const torch = c.baselines['torch-matmul'];
  const ratio = torch !== undefined && 'tflops' in torch && torch.tflops !== undefined && c.ours.tflops !== undefined ? c.ours.tflops / torch.tflops : NaN;
  console.log(`${c.name}: ours ${c.ours.tflops?.toFixed(1)} TFLOP/s = ${ratio.toFixed(3)} of torch.matmul; valid ${c.valid}`);
}
process.exitCode = result.cases.every((c) => c.valid) ? 0 : 1;
