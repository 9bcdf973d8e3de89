#!/usr/bin/env node
// The GPU test runner (`npm run test:gpu`; on the GPU machine via run-on-gpu.sh). Runs every
// *.gpu.spec.ts (node:test) from one esbuild bundle in a child process and prints a spec report.
// Without a usable CUDA device every test skips itself; the runner then says so LOUDLY:
//   SKIPPED: no CUDA device: <probe reason> (<n> GPU tests)
// and exits 0. With a device it exits 1 when any test fails (or none ran).
//
//   node tools/device/run-gpu-tests.mjs [--bundle file.mjs] [--addon file.node] [--out dir]
//
// Without --bundle it bundles the workspace's specs first (needs esbuild, i.e. a dev checkout).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { run } from 'node:test';
import { spec as SpecReporter } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const ADDON = 'tilekit_runtime.node';
const { values: args } = parseArgs({
  options: { bundle: { type: 'string' }, addon: { type: 'string' }, out: { type: 'string' } },
});

let bundle = args.bundle ? resolve(args.bundle) : undefined;
if (!bundle) {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gpu-tests-'));
  bundle = join(dir, 'gpu-tests.mjs');
  const { bundleGpuTests } = await import('./bundle.mjs');
  const specs = await bundleGpuTests(bundle);
  console.log(`bundled ${specs.length} GPU spec files into ${bundle}`);
}
// The bundle loads the addon from beside itself; put one there if it is missing.
const besideBundle = join(dirname(bundle), ADDON);
const addon = args.addon ? resolve(args.addon) : existsSync(besideBundle) ? besideBundle : join(root, 'libs', 'runtime', 'build', 'Release', ADDON);
if (addon !== besideBundle && existsSync(addon)) copyFileSync(addon, besideBundle);

let probe;
try {
  probe = createRequire(import.meta.url)(besideBundle).probe();
} catch (error) {
  probe = { addon: false, driver: false, deviceCount: 0, nvrtc: false, reason: `native addon not loadable (${besideBundle}): ${error.message}` };
}
console.log(`probe: ${JSON.stringify(probe)}`);
const hasDevice = probe.driver === true && probe.deviceCount > 0;

const results = [];
const stream = run({ files: [bundle], timeout: 20 * 60 * 1000 });
stream.on('test:pass', (data) => {
  if (data.details?.type === 'suite') return;
  results.push({ name: data.name, status: data.skip ? 'skipped' : data.todo ? 'todo' : 'passed', ms: data.details?.duration_ms, skip: data.skip });
});
stream.on('test:fail', (data) => {
  if (data.details?.type === 'suite') return;
  const error = data.details?.error;
  const cause = error?.cause ?? error;
  results.push({ name: data.name, status: 'failed', ms: data.details?.duration_ms, error: String(cause?.stack ?? cause ?? 'unknown') });
});
const diagnostics = [];
stream.on('test:diagnostic', (data) => diagnostics.push(data.message));
await new Promise((resolveDone, reject) => {
  const reporter = stream.compose(new SpecReporter());
  reporter.on('data', (chunk) => process.stdout.write(chunk));
  reporter.on('end', resolveDone);
  reporter.on('error', reject);
});

const count = (status) => results.filter((r) => r.status === status).length;
const summary = {
  probe,
  bundle,
  counts: { total: results.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped') },
  tests: results,
  diagnostics,
};
if (args.out) {
  mkdirSync(args.out, { recursive: true });
  writeFileSync(join(args.out, 'gpu-tests.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

const line = '='.repeat(78);
if (!hasDevice) {
  console.log(`\n${line}\nSKIPPED: no CUDA device: ${probe.reason ?? 'unknown reason'} (${summary.counts.skipped} GPU tests skipped, ${summary.counts.total} found)\n${line}`);
  process.exit(summary.counts.failed > 0 ? 1 : 0);
}
console.log(`\n${line}\nGPU tests: ${summary.counts.passed} passed, ${summary.counts.failed} failed, ${summary.counts.skipped} skipped (of ${summary.counts.total})\n${line}`);
process.exit(summary.counts.failed > 0 || summary.counts.passed === 0 ? 1 : 0);
