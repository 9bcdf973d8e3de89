#!/usr/bin/env node
// Packs what a GPU machine needs into the git-ignored folder .device/ (carry it with the run):
//   node.xz                 this node binary, xz-compressed (the GPU machine has no node)
//   tilekit_runtime.node    the native addon built here (links no CUDA library); a second copy in
//                           chunks/, where the runtime's code now lives, so that a bundle run by
//                           hand finds it without $TILEKIT_ADDON_PATH (addon.ts: addonCandidates)
//   gpu-tests/<package>-<spec>.mjs   one entry per *.gpu.spec.ts (node:test), so that the runner
//                           can give each its own process
//   bench-<name>.mjs        one entry per src/**/<name>.bench.ts
//   chunks/*.mjs            the code the entries share (one esbuild build with splitting: bundle.mjs)
//   manifest.json           what was packed, sizes, node version, git commit
//   kernel-cache.tar.xz     with --kernel-cache FILE: compiled kernels from an earlier GPU run
//                           (run-on-gpu.sh with TILEKIT_EXPORT_CACHE=1 wrote it), which
//                           run-on-gpu.sh extracts into the kernel cache so they are not compiled again
// The source maps go to .device-maps/ (git-ignored, stays here): map a GPU log's stack traces back
// to the .ts sources with `node tools/device/symbolize.mjs <log>`. Checks that the pack plus the
// work tree stays under LIMIT: a device run carries at most 64 MiB, and 48 leaves room to grow.
//
//   node tools/device/pack.mjs [--out dir] [--maps dir] [--bench name=path/to/entry.ts ...] [--no-node]
//                              [--kernel-cache file.tar.xz]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleForDevice, CHUNKS_DIR, findBenchEntries, GPU_TESTS_DIR, repoRoot } from './bundle.mjs';
import { gitState } from './provenance.mjs';

const LIMIT = 48 * 1024 * 1024;
const ADDON = 'tilekit_runtime.node';
const KERNEL_CACHE = 'kernel-cache.tar.xz';
const USAGE = `usage: node tools/device/pack.mjs [--out dir] [--maps dir] [--bench name=path ...] [--no-node] [--kernel-cache file]
  --out dir            where the pack goes (default .device; carry it with the device run)
  --maps dir           where the source maps go (default <out>-maps, i.e. .device-maps; stays here)
  --bench name=path    one more bench entry, bundled as bench-<name>.mjs (repeatable)
  --no-node            skip compressing node into node.xz (an existing one is kept)
  --kernel-cache file  copy this kernel-cache.tar.xz (from a GPU run with TILEKIT_EXPORT_CACHE=1) into the pack,
                       for run-on-gpu.sh to extract (an earlier pack's copy is kept when not given)
Fails (exit 1) when the pack plus the git work tree exceeds ${LIMIT / 1024 / 1024} MiB.`;

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Exits 2 with one line on stderr: bad usage is the caller's mistake, a stack would only hide it. */
function usageError(problem) {
  console.error(`pack: ${problem} (see --help)`);
  process.exit(2);
}

/** The command line, checked: `{ out, maps, benches: { name: path }, node }`. */
function parseCli(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        out: { type: 'string' },
        maps: { type: 'string' },
        bench: { type: 'string', multiple: true },
        'no-node': { type: 'boolean' },
        'kernel-cache': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    usageError(error.message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const out = resolve(values.out ?? join(repoRoot, '.device'));
  const benches = { ...findBenchEntries() };
  for (const spec of values.bench ?? []) {
    const [name, path, extra] = spec.split('=');
    if (!name || !path || extra !== undefined) usageError(`--bench expects name=path, got '${spec}'`);
    if (!existsSync(path)) usageError(`--bench ${name}: no file ${path}`);
    benches[name] = resolve(path);
  }
  const kernelCache = values['kernel-cache'];
  if (kernelCache !== undefined && !existsSync(kernelCache)) usageError(`--kernel-cache: no file ${kernelCache}`);
  return {
    out,
    maps: resolve(values.maps ?? `${out}-maps`),
    benches,
    node: !values['no-node'],
    kernelCache: kernelCache === undefined ? undefined : resolve(kernelCache),
  };
}

/** Copies the native addon (building it first if this checkout has not) to the pack and its chunks. */
function packAddon(out) {
  const addon = join(repoRoot, 'libs', 'runtime', 'build', 'Release', ADDON);
  if (!existsSync(addon)) {
    console.log('pack: building the native addon first');
    const build = spawnSync(process.execPath, [join(repoRoot, 'libs', 'runtime', 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
    if (build.status !== 0) process.exit(1);
  }
  copyFileSync(addon, join(out, ADDON));
  copyFileSync(addon, join(out, CHUNKS_DIR, ADDON));
}

/** node.xz: this node binary, compressed; reused while the binary is unchanged. */
async function packNode(out) {
  const nodeXz = join(out, 'node.xz');
  const fresh = existsSync(nodeXz) && statSync(nodeXz).mtimeMs >= statSync(process.execPath).mtimeMs && statSync(nodeXz).size > 0;
  if (fresh) return;
  console.log(`pack: xz -T2 ${process.execPath} (about a minute)`);
  const file = createWriteStream(`${nodeXz}.partial`);
  await new Promise((resolveDone, reject) => {
    file.on('open', () => {
      const xz = spawnSync('xz', ['-T2', '-c', process.execPath], { stdio: ['ignore', file.fd, 'inherit'] });
      if (xz.status !== 0) reject(new Error(`xz failed with status ${xz.status ?? xz.error?.message}`));
      else file.close(resolveDone);
    });
    file.on('error', reject);
  });
  renameSync(`${nodeXz}.partial`, nodeXz);
}

/** Every file under `dir`, as `{ path relative to dir (with /): size }`. */
function filesUnder(dir, prefix = '', out = {}) {
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) filesUnder(dir, rel, out);
    else if (entry.isFile()) out[rel] = statSync(join(dir, rel)).size;
  }
  return out;
}

/** The bytes of the tracked and not-ignored files: the work tree travels with every device run. */
function workTreeBytes() {
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
  return tree;
}

/** HEAD, and whether uncommitted changes travel with the work tree (results then measure both). */
function packedGitState() {
  return gitState(repoRoot) ?? { commit: 'unknown', dirty: false };
}

/** Which line of the size report a packed file counts in. */
function groupOf(path) {
  if (path.startsWith(`${GPU_TESTS_DIR}/`)) return `${GPU_TESTS_DIR}/*.mjs`;
  if (path.startsWith(`${CHUNKS_DIR}/`) && path.endsWith('.mjs')) return `${CHUNKS_DIR}/*.mjs`;
  if (/^bench-.*\.mjs$/.test(path)) return 'bench-*.mjs';
  if (path === 'node.xz' || path.endsWith(ADDON) || path === 'manifest.json' || path === KERNEL_CACHE) return path;
  return 'other files (they travel too)';
}

/** Prints one line per group of files: its size and file count. */
function printSizes(files) {
  const groups = new Map();
  for (const [path, size] of Object.entries(files)) {
    const group = groups.get(groupOf(path)) ?? { size: 0, count: 0 };
    groups.set(groupOf(path), { size: group.size + size, count: group.count + 1 });
  }
  for (const [name, { size, count }] of groups)
    console.log(`pack:   ${name.padEnd(32)} ${mib(size).padStart(9)}${count > 1 ? `  (${count} files)` : ''}`);
}

async function main() {
  const { out, maps, benches, node, kernelCache } = parseCli(process.argv.slice(2));
  mkdirSync(out, { recursive: true });
  rmSync(join(out, 'gpu-tests.mjs'), { force: true }); // the single bundle of an older layout
  let bundled;
  try {
    bundled = await bundleForDevice({ outDir: out, mapsDir: maps, benches });
  } catch (error) {
    console.error(`pack: bundling failed: ${error.message.split('\n')[0]}`);
    process.exit(1);
  }
  packAddon(out);
  if (node) await packNode(out);
  // Counted in the size check like every file of the pack: it travels with the run.
  if (kernelCache !== undefined && kernelCache !== join(out, KERNEL_CACHE)) copyFileSync(kernelCache, join(out, KERNEL_CACHE));

  const files = filesUnder(out);
  delete files['manifest.json'];
  const tree = workTreeBytes();
  const manifest = {
    createdAt: new Date().toISOString(),
    node: process.version,
    ...packedGitState(),
    specs: bundled.specs,
    benches: Object.fromEntries(Object.entries(benches).map(([n, p]) => [n, relative(repoRoot, p)])),
    chunks: bundled.chunks,
    files,
    workTreeBytes: tree,
  };
  manifest.packedBytes = Object.values(files).reduce((a, b) => a + b, 0);
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = manifest.packedBytes + statSync(join(out, 'manifest.json')).size;

  printSizes({ ...files, 'manifest.json': packed - manifest.packedBytes });
  const where = relative(repoRoot, out) || out;
  console.log(
    `pack: ${bundled.specs.length} GPU spec files, ${Object.keys(benches).length} bench entries, ${bundled.chunks.length} shared chunks in ${where}`,
  );
  console.log(`pack: source maps in ${relative(repoRoot, maps) || maps} (map a GPU log with: node tools/device/symbolize.mjs <log>)`);
  if (!files['node.xz']) console.log('pack: no node.xz (--no-node): the total below leaves it out');
  if (files[KERNEL_CACHE] !== undefined)
    console.log(
      `pack: ${KERNEL_CACHE} ` +
        `${kernelCache === undefined ? 'kept from an earlier pack' : `from ${kernelCache}`} ` +
        `(run-on-gpu.sh extracts it into the kernel cache)`,
    );
  console.log(`pack: ${where} ${mib(packed)} + work tree ${mib(tree)} = ${mib(packed + tree)} of ${mib(LIMIT)}`);
  if (packed + tree > LIMIT) {
    console.error(
      `pack: TOO LARGE: ${mib(packed + tree)} is over the ${mib(LIMIT)} limit for the pack plus the work tree (a device run carries at most 64 MiB)`,
    );
    process.exit(1);
  }
}

await main();
