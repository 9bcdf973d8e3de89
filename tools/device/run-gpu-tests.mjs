#!/usr/bin/env node
// The GPU test runner (`npm run test:gpu`; on the GPU machine via run-on-gpu.sh). Runs the
// esbuild bundles of the *.gpu.spec.ts files (node:test) one after another, EACH IN ITS OWN node
// process: a sticky CUDA error (an illegal instruction, say) poisons the context of that process
// only, so it fails the rest of its own file and nothing else. Prints a spec report per file, one
// summary line
//   GPU tests: <n> passed, <m> failed, <k> skipped (of <t>)
// and a per-file breakdown; --out writes the same as gpu-tests.json, headed by its provenance
// (provenance.mjs: commit, device, date, driver, SM clocks, power limit). Without a usable CUDA device
// every test skips itself; the runner then says so LOUDLY:
//   SKIPPED: no CUDA device: <probe reason> (<n> GPU tests skipped, <t> found)
// and exits 0. With a device it exits 1 when any test fails (or none passed).
//
//   node tools/device/run-gpu-tests.mjs [--bundles dir | --bundle file.mjs ...] [--addon file.node] [--out dir]
//                                       [--file-timeout seconds]
//
// --bundles runs every *.mjs in dir (pack.mjs writes .device/gpu-tests/; the code they share is in
// .device/chunks/, which they import by relative path); --bundle names files.
// --file-timeout (default 900) stops a file's process that runs longer (a hung kernel, say) and
// counts it as one failure, so that the later files still run and the summary still prints.
// With neither it bundles the workspace's specs first (needs esbuild, i.e. a dev checkout).
// The bundles carry no source maps: when tests fail, the runner says how to map their stack traces
// back to the sources (tools/device/symbolize.mjs, with the maps pack.mjs left on the dev machine).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { run } from 'node:test';
import { clearTimeout, setTimeout } from 'node:timers';
import { spec as SpecReporter } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { recordProvenance } from './provenance.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const ADDON = 'tilekit_runtime.node';
const USAGE = `usage: node tools/device/run-gpu-tests.mjs [--bundles dir | --bundle file.mjs ...] [--addon file.node]
                                           [--out dir] [--file-timeout seconds]
  --bundles dir           run every *.mjs in dir (.device/gpu-tests after pack.mjs)
  --bundle file.mjs       run this bundle (repeatable); with neither, bundle the workspace's specs first
  --addon file.node       the native addon (default: beside the bundles, or this checkout's build)
  --out dir               also write gpu-tests.json there
  --file-timeout seconds  stop a spec file's process that runs longer (default 900)`;

/** Exits 2 with one line on stderr: a bad command line needs no stack. */
function usageError(problem) {
  console.error(`run-gpu-tests: ${problem} (see --help)`);
  process.exit(2);
}

function parseCli(argv) {
  try {
    return parseArgs({
      args: argv,
      options: {
        bundle: { type: 'string', multiple: true },
        bundles: { type: 'string' },
        addon: { type: 'string' },
        out: { type: 'string' },
        'file-timeout': { type: 'string', default: '900' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    return usageError(error.message);
  }
}

const args = parseCli(process.argv.slice(2));
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const fileTimeoutMs = Number(args['file-timeout']) * 1000;
if (!(fileTimeoutMs > 0)) usageError(`--file-timeout must be a positive number of seconds, got ${args['file-timeout']}`);

let bundles;
let mapsDir; // set when this run bundled the specs itself (else .device-maps, from pack.mjs)
let packed = true; // bundles from a pack (their commit is the manifest's), not bundled here from the checkout
if (args.bundle?.length) bundles = args.bundle.map((b) => resolve(b));
else if (args.bundles) {
  const dir = resolve(args.bundles);
  if (!existsSync(dir)) usageError(`no bundles folder ${dir} (run node tools/device/pack.mjs and carry .device)`);
  bundles = readdirSync(dir)
    .filter((n) => n.endsWith('.mjs'))
    .sort()
    .map((n) => join(dir, n));
} else {
  // A dev checkout: bundle into a temp folder laid out like .device/ (gpu-tests/ and chunks/),
  // with the maps beside it in maps/.
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gpu-tests-'));
  packed = false;
  const { bundleForDevice, GPU_TESTS_DIR } = await import('./bundle.mjs');
  mapsDir = join(dir, 'maps');
  const { specs } = await bundleForDevice({ outDir: dir, mapsDir });
  bundles = specs.map((s) => join(dir, GPU_TESTS_DIR, s.bundle));
  console.log(`bundled ${specs.length} GPU spec files into ${dir}`);
}
for (const b of bundles) if (!existsSync(b)) usageError(`no bundle ${b}`);

// The addon: --addon, else beside the (first) bundle, beside its folder (.device/), or this
// checkout's build. Every test process gets it through TILEKIT_ADDON_PATH.
const candidates = [
  args.addon,
  ...(bundles.length > 0 ? [join(dirname(bundles[0]), ADDON), join(dirname(bundles[0]), '..', ADDON)] : []),
  join(root, 'libs', 'runtime', 'build', 'Release', ADDON),
].filter((p) => p !== undefined);
const addon = resolve(candidates.find((p) => existsSync(p)) ?? candidates[0] ?? ADDON);
process.env['TILEKIT_ADDON_PATH'] = addon;

let probe;
try {
  probe = createRequire(import.meta.url)(addon).probe();
} catch (error) {
  probe = { addon: false, driver: false, deviceCount: 0, nvrtc: false, reason: `native addon not loadable (${addon}): ${error.message}` };
}
console.log(`probe: ${JSON.stringify(probe)}`);
// A pack's manifest.json lies beside its gpu-tests/ folder; bundles made here take the checkout's git state.
const provenance = recordProvenance({
  manifestPath: packed && bundles.length > 0 ? join(dirname(bundles[0]), '..', 'manifest.json') : undefined,
  root,
  fallbackDevice: probe.driver === true ? undefined : 'none',
});
console.log(`provenance: ${JSON.stringify(provenance)}`);
const hasDevice = probe.driver === true && probe.deviceCount > 0;

/** Runs one bundle in its own process (node:test gives every file a child process); its results. */
async function runBundle(bundle) {
  const file = basename(bundle);
  const results = [];
  const diagnostics = [];
  const started = Date.now();
  // Aborting the run ends the file's child process (node:test spawns it with this signal).
  const watchdog = new globalThis.AbortController();
  const timer = setTimeout(() => watchdog.abort(), fileTimeoutMs);
  const stream = run({ files: [bundle], concurrency: 1, timeout: 20 * 60 * 1000, signal: watchdog.signal });
  stream.on('test:pass', (data) => {
    if (data.details?.type === 'suite') return;
    results.push({
      file,
      name: data.name,
      status: data.skip ? 'skipped' : data.todo ? 'todo' : 'passed',
      ms: data.details?.duration_ms,
      skip: data.skip,
    });
  });
  stream.on('test:fail', (data) => {
    if (data.details?.type === 'suite') return;
    const error = data.details?.error;
    const cause = error?.cause ?? error;
    results.push({
      file,
      name: data.name,
      status: 'failed',
      ms: data.details?.duration_ms,
      error: String(cause?.stack ?? cause ?? 'unknown'),
    });
  });
  stream.on('test:diagnostic', (data) => diagnostics.push(data.message));
  console.log(`\n--- ${file} (own process)`);
  await new Promise((resolveDone, reject) => {
    const reporter = stream.compose(new SpecReporter());
    reporter.on('data', (chunk) => process.stdout.write(chunk));
    reporter.on('end', resolveDone);
    reporter.on('error', reject);
  });
  clearTimeout(timer);
  if (watchdog.signal.aborted) {
    const error = `the file's process ran longer than --file-timeout ${fileTimeoutMs / 1000} s and was stopped`;
    console.log(`✖ ${file}: ${error}`);
    // node:test reports the aborted file as one failure; say why there, or add that failure.
    const aborted = results.find((r) => r.status === 'failed' && /abort/i.test(r.error ?? ''));
    if (aborted) aborted.error = `${error}\n${aborted.error}`;
    else results.push({ file, name: `${file} (whole file)`, status: 'failed', ms: Date.now() - started, error });
  }
  return { file, bundle, ms: Date.now() - started, counts: countsOf(results), tests: results, diagnostics };
}

function countsOf(results) {
  const count = (status) => results.filter((r) => r.status === status).length;
  return { total: results.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}

const files = [];
for (const bundle of bundles) files.push(await runBundle(bundle));

const tests = files.flatMap((f) => f.tests);
const counts = countsOf(tests);
const summary = {
  ...provenance,
  probe,
  addon,
  counts,
  files: files.map(({ file, bundle, ms, counts: c }) => ({ file, bundle, ms, counts: c })),
  tests,
  diagnostics: files.flatMap((f) => f.diagnostics.map((message) => ({ file: f.file, message }))),
};
if (args.out) {
  mkdirSync(args.out, { recursive: true });
  writeFileSync(join(args.out, 'gpu-tests.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

const line = '='.repeat(78);
const width = Math.max(...files.map((f) => f.file.length), 4);
const breakdown = files
  .map(
    (f) =>
      `  ${f.file.padEnd(width)}  ${f.counts.passed} passed, ${f.counts.failed} failed, ` +
      `${f.counts.skipped} skipped (of ${f.counts.total})` +
      `${f.counts.failed > 0 ? '  <-- FAILED' : ''}`,
  )
  .join('\n');
/** How to map the failures' stack traces (bundle lines) back to the .ts sources. */
function symbolizeHint() {
  const command = mapsDir
    ? `node tools/device/symbolize.mjs --maps ${mapsDir} <this output, saved to a file>`
    : 'node tools/device/symbolize.mjs .device/out/gpu-tests.log   (or gpu-tests.json; the log run-on-gpu.sh wrote)';
  return `stack traces point into the bundles; map them to the sources on the dev machine with:\n  ${command}`;
}

const hint = counts.failed > 0 ? `\n${symbolizeHint()}` : '';
if (!hasDevice) {
  console.log(
    `\n${line}\nSKIPPED: no CUDA device: ${probe.reason ?? 'unknown reason'} (` +
      `${counts.skipped} GPU tests skipped, ${counts.total} found)\n${breakdown}${hint}\n` +
      `${line}`,
  );
  process.exit(counts.failed > 0 ? 1 : 0);
}
console.log(
  `\n${line}\nGPU tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped (of ${counts.total})\n${breakdown}${hint}\n${line}`,
);
process.exit(counts.failed > 0 || counts.passed === 0 ? 1 : 0);
