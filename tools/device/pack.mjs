#!/usr/bin/env node
// Packs what a GPU machine needs into the git-ignored folder .device/ (carry it with the run):
//   node.xz            this node binary, xz-compressed (the GPU machine has no node)
//   tilekit_runtime.node   the native addon built here (links no CUDA library)
//   gpu-tests/<package>-<spec>.mjs   each *.gpu.spec.ts, bundled with esbuild (node:test), one file
//                      per spec so that the runner can give each its own process
//   bench-<name>.mjs   every src/**/<name>.bench.ts, bundled likewise
//   manifest.json      what was packed, sizes, node version, git commit
// and checks that it all stays under the 64 MiB a device run may carry (with the work tree).
//
//   node tools/device/pack.mjs [--bench name=path/to/entry.ts ...] [--no-node]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleEntry, bundleGpuTests, findBenchEntries, repoRoot } from './bundle.mjs';

const LIMIT = 64 * 1024 * 1024;
const { values: args } = parseArgs({
  options: { bench: { type: 'string', multiple: true }, 'no-node': { type: 'boolean' } },
});
const out = join(repoRoot, '.device');
const addon = join(repoRoot, 'libs', 'runtime', 'build', 'Release', 'tilekit_runtime.node');
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) {
  if (/^(gpu-tests|bench-.*)\.mjs$/.test(name)) rmSync(join(out, name));
}
// The per-spec bundles of an earlier pack (a spec may have been removed since).
const testsDir = join(out, 'gpu-tests');
rmSync(testsDir, { recursive: true, force: true });

// 1. The addon (build it if this checkout has not).
if (!existsSync(addon)) {
  console.log('pack: building the native addon first');
  const build = spawnSync(process.execPath, [join(repoRoot, 'libs', 'runtime', 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(1);
}
copyFileSync(addon, join(out, 'tilekit_runtime.node'));

// 2. node, compressed; reused while the binary is unchanged.
const nodeXz = join(out, 'node.xz');
if (!args['no-node']) {
  const fresh = existsSync(nodeXz) && statSync(nodeXz).mtimeMs >= statSync(process.execPath).mtimeMs && statSync(nodeXz).size > 0;
  if (!fresh) {
    console.log(`pack: xz -T2 ${process.execPath} (about a minute)`);
    const file = createWriteStream(`${nodeXz}.partial`);
    await new Promise((resolveDone, reject) => {
      file.on('open', () => {
        const xz = spawnSync('xz', ['-T2', '-c', process.execPath], { stdio: ['ignore', file.fd, 'inherit'] });
        if (xz.status !== 0) reject(new Error(`xz failed with status ${xz.status}`));
        else file.close(resolveDone);
      });
      file.on('error', reject);
    });
    execFileSync('mv', [`${nodeXz}.partial`, nodeXz]);
  }
}

// 3. Bundles.
const specs = await bundleGpuTests(testsDir);
const benches = { ...findBenchEntries() };
for (const spec of args.bench ?? []) {
  const [name, path] = spec.split('=');
  if (!name || !path) throw new Error(`--bench expects name=path, got ${spec}`);
  benches[name] = resolve(path);
}
for (const [name, entry] of Object.entries(benches)) await bundleEntry(entry, join(out, `bench-${name}.mjs`));

// 4. Manifest and size check (the tracked work tree travels too).
const files = Object.fromEntries(
  [...readdirSync(out), ...readdirSync(testsDir).map((n) => `gpu-tests/${n}`)]
    .filter((n) => statSync(join(out, n)).isFile() && !n.endsWith('.partial') && n !== 'manifest.json')
    .map((n) => [n, statSync(join(out, n)).size]),
);
const packed = Object.values(files).reduce((a, b) => a + b, 0);
let tree = 0;
try {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const f of listed) if (existsSync(join(repoRoot, f))) tree += statSync(join(repoRoot, f)).size;
} catch {
  // not a git checkout: only the pack is counted
}
let commit = 'unknown';
let dirty = false;
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot }).toString().trim();
  // Uncommitted changes travel with the work tree: results then measure HEAD plus those changes.
  dirty = execFileSync('git', ['status', '--porcelain'], { cwd: repoRoot }).toString().trim() !== '';
} catch {
  // keep unknown
}
const manifest = {
  createdAt: new Date().toISOString(),
  node: process.version,
  commit,
  dirty,
  specs,
  benches: Object.fromEntries(Object.entries(benches).map(([n, p]) => [n, relative(repoRoot, p)])),
  files,
  packedBytes: packed,
  workTreeBytes: tree,
};
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const [name, size] of Object.entries(files)) console.log(`pack: .device/${name}  ${mib(size)}`);
console.log(`pack: ${specs.length} GPU spec files, ${Object.keys(benches).length} bench entries`);
console.log(`pack: .device ${mib(packed)} + work tree ${mib(tree)} = ${mib(packed + tree)} of ${mib(LIMIT)}`);
if (packed + tree > LIMIT) {
  console.error('pack: TOO LARGE for a device run (64 MiB with the work tree)');
  process.exit(1);
}
