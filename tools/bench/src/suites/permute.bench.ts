// Bench entry (bundled by tools/device/pack.mjs as .device/bench-permute.mjs; run by run-on-gpu.sh):
//   node .device/bench-permute.mjs --out DIR      writes DIR/permute.json (BENCHMARKS.md format)
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Device } from '@tilekit/runtime';
import { runSuite } from '../runSuite.ts';
import { permuteSuite } from './permute.ts';

const { values } = parseArgs({ options: { out: { type: 'string' }, torch: { type: 'string' } } });
const root = process.cwd();
const manifestPath = join(root, '.device', 'manifest.json');
const manifest = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as { commit?: string; dirty?: boolean }) : {};
const commit = `${manifest.commit ?? 'unknown'}${manifest.dirty ? '+uncommitted' : ''}`;
const result = await runSuite(permuteSuite(), {
  outDir: resolve(values.out ?? join(root, '.device', 'out')),
  device: Device.open(0).name,
  commit,
  torchScript: values.torch ?? join(root, 'tools', 'bench', 'python', 'torch_reference.py'),
});
for (const c of result.cases) {
  const copy = c.baselines['torch-copy'];
  const ratio = copy !== undefined && 'gbps' in copy && copy.gbps !== undefined && c.ours.gbps !== undefined ? c.ours.gbps / copy.gbps : NaN;
  console.log(`${c.name}: ours ${c.ours.gbps?.toFixed(0)} GB/s = ${ratio.toFixed(3)} of torch copy; valid ${c.valid}`);
}
process.exitCode = result.cases.every((c) => c.valid) ? 0 : 1;
