// Bench entry (bundled by tools/device/pack.mjs as .device/bench-fmha-bwd.mjs; run by run-on-gpu.sh):
//   node .device/bench-fmha-bwd.mjs --out DIR      writes DIR/fmha-bwd.json (BENCHMARKS.md format)
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Device } from '@tilekit/runtime';
import { runSuite } from '../runSuite.ts';
import { fmhaBwdSuite } from './fmhaBwd.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, torch: { type: 'string' } } });
const root = process.cwd();
const manifestPath = join(root, '.device', 'manifest.json');
const manifest = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as { commit?: string; dirty?: boolean }) : {};
const commit = `${manifest.commit ?? 'unknown'}${manifest.dirty ? '+uncommitted' : ''}`;
const result = await runSuite(fmhaBwdSuite(), {
  outDir: resolve(values.out ?? join(root, '.device', 'out')),
  device: Device.open(0).name,
  commit,
  torchScript: values.torch ?? join(root, 'tools', 'bench', 'python', 'torch_reference.py'),
});
for (const c of result.cases) {
  const ratios = ['torch-flash', 'torch-cudnn'].map((name) => {
    const base = c.baselines[name];
    return base !== undefined && 'tflops' in base && base.tflops !== undefined && c.ours.tflops !== undefined ? `${(c.ours.tflops / base.tflops).toFixed(3)} of ${name}` : `${name} n/a`;
  });
  console.log(`${c.name}: ours ${c.ours.tflops?.toFixed(1)} TFLOP/s = ${ratios.join(', ')}; valid ${c.valid}`);
}
process.exitCode = result.cases.every((c) => c.valid) ? 0 : 1;
