// The real pack, node.xz included (about a minute of xz on 2 cores), into a temp folder so that a
// dev's .device/ is left alone: it must fit a device run with the work tree (48 MiB), give every
// GPU spec and bench its entry file, keep the source maps out of the pack, and its maps must take
// a frame of the GPU machine back to the .ts source. Also the command-line errors of the tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const deviceDir = join(import.meta.dirname, '..');
const repoRoot = join(deviceDir, '..', '..');
const LIMIT = 48 * 1024 * 1024;

function runNode(args: readonly string[], input?: string) {
  return spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', ...(input === undefined ? {} : { input }) });
}

/** Every file under `dir` whose name ends with `suffix` (no node_modules or dot folders), as paths relative to `base`. */
function filesEndingWith(dir: string, suffix: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : filesEndingWith(path, suffix, base);
    return entry.name.endsWith(suffix) ? [path.slice(base.length + 1)] : [];
  });
}

/** The workspace's `src/**` files ending with `suffix`, relative to the repo; found here, not by bundle.mjs. */
function workspaceSources(suffix: string): string[] {
  return ['libs', 'kernels', 'examples', 'tools']
    .flatMap((group) => readdirSync(join(repoRoot, group)).map((pkg) => `${group}/${pkg}/src`))
    .flatMap((src) => filesEndingWith(join(repoRoot, src), suffix).map((f) => `${src}/${f}`))
    .sort();
}

/** A synthetic frame as a GPU machine prints it: an absolute path there, at `bundle` under .device. */
function gpuMachineFrame(bundle: string, line: number, column: number): string {
  return `    at check (/home/gpu/run-42/.device/${bundle}:${line}:${column})\n`;
}

/**
 * The first code line of module `source` in a bundle (esbuild writes `// <source>` above each
 * module's code), with the column of its first non-blank character (both 1-based).
 */
function firstCodeOf(bundleText: string, source: string): { line: number; column: number } {
  const lines = bundleText.split('\n');
  const marker = lines.indexOf(`// ${source}`);
  expect(marker, `no '// ${source}' in the bundle`).toBeGreaterThanOrEqual(0);
  const code = lines[marker + 1] ?? '';
  return { line: marker + 2, column: code.length - code.trimStart().length + 1 };
}

interface Manifest {
  specs: { spec: string; bundle: string }[];
  benches: Record<string, string>;
  chunks: string[];
  files: Record<string, number>;
  workTreeBytes: number;
}

const hasXz = spawnSync('xz', ['--version']).status === 0;
if (!hasXz) console.warn('\n!!! tools/device pack.spec: SKIPPED the real pack: no xz on PATH (pack.mjs needs it for node.xz) !!!\n');

describe.skipIf(!hasXz)('pack.mjs, the real pack into a temp folder', () => {
  let dir = '';
  let out = '';
  let maps = '';
  let pack: ReturnType<typeof runNode>;
  let manifest: Manifest;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilekit-pack-'));
    out = join(dir, 'pack');
    maps = join(dir, 'pack-maps');
    pack = runNode([join(deviceDir, 'pack.mjs'), '--out', out]);
    if (pack.status === 0) manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('succeeds and, node.xz and the work tree included, stays within 48 MiB', () => {
    expect(pack.status, pack.stderr).toBe(0);
    expect(manifest.files['node.xz']).toBeGreaterThan(0);
    const packed = filesEndingWith(out, '').reduce((sum, f) => sum + statSync(join(out, f)).size, 0);
    expect(packed + manifest.workTreeBytes).toBeLessThanOrEqual(LIMIT);
    expect(pack.stdout).toMatch(/of 48\.0 MiB\n/);
  });

  it('gives every GPU spec its gpu-tests/<package>-<spec>.mjs and every bench its bench-<name>.mjs', () => {
    const specs = workspaceSources('.gpu.spec.ts');
    expect(specs.length).toBeGreaterThan(0);
    expect(manifest.specs.map((s) => s.spec)).toEqual(specs);
    for (const { spec, bundle } of manifest.specs) {
      expect(bundle).toMatch(new RegExp(`-${spec.slice(spec.lastIndexOf('/') + 1, -'.gpu.spec.ts'.length)}\\.mjs$`));
      expect(existsSync(join(out, 'gpu-tests', bundle)), bundle).toBe(true);
    }
    for (const bench of workspaceSources('.bench.ts')) {
      const name = bench.slice(bench.lastIndexOf('/') + 1, -'.bench.ts'.length);
      expect(existsSync(join(out, `bench-${name}.mjs`)), bench).toBe(true);
    }
  });

  it('shares code through chunks/, with the addon there too, and keeps every source map outside the pack', () => {
    expect(manifest.chunks.length).toBeGreaterThan(0);
    expect(existsSync(join(out, 'chunks', 'tilekit_runtime.node'))).toBe(true);
    const bundles = filesEndingWith(out, '.mjs');
    expect(bundles.length).toBe(manifest.specs.length + Object.keys(manifest.benches).length + manifest.chunks.length);
    for (const bundle of bundles) {
      expect(readFileSync(join(out, bundle), 'utf8'), bundle).not.toContain('sourceMappingURL');
      expect(existsSync(join(maps, `${bundle}.map`)), bundle).toBe(true);
    }
    expect(filesEndingWith(out, '.map')).toEqual([]);
  });

  it('symbolize maps a synthetic GPU-machine frame in a spec entry and in a chunk back to the .ts source', () => {
    const first = manifest.specs[0]!;
    const entry = `gpu-tests/${first.bundle}`;
    const inEntry = firstCodeOf(readFileSync(join(out, entry), 'utf8'), first.spec);
    const chunk = manifest.chunks[0]!;
    const chunkText = readFileSync(join(out, chunk), 'utf8');
    const chunkSource = /^\/\/ ((?:libs|kernels|examples|tools)\/\S+\.ts)$/m.exec(chunkText)?.[1] ?? 'no module comment in the chunk';
    const inChunk = firstCodeOf(chunkText, chunkSource);
    const log = gpuMachineFrame(entry, inEntry.line, inEntry.column) + gpuMachineFrame(chunk, inChunk.line, inChunk.column);
    const run = runNode([join(deviceDir, 'symbolize.mjs'), '--maps', maps, '-'], log);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`at check \\(${first.spec.replaceAll('.', '\\.')}:\\d+:\\d+\\)\\n`));
    expect(run.stdout).toMatch(new RegExp(`at check \\(${chunkSource.replaceAll('.', '\\.')}:\\d+:\\d+\\)\\n`));
  });

  it('a runtime spec bundle loads through its chunks and the runner finds the addon (it skips loudly without a device)', () => {
    const spec = manifest.specs.find((s) => s.spec.startsWith('libs/runtime/'));
    expect(spec).toBeDefined();
    const bundle = join(out, 'gpu-tests', spec!.bundle);
    const run = runNode([join(deviceDir, 'run-gpu-tests.mjs'), '--bundle', bundle, '--addon', join(out, 'tilekit_runtime.node')]);
    expect(run.stdout).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module|native addon not loadable/);
    expect(run.stdout).toMatch(/SKIPPED: no CUDA device: .*\(\d+ GPU tests skipped|GPU tests: \d+ passed, 0 failed/);
    expect(run.status, run.stdout).toBe(0);
  });
});

describe('command-line errors of pack.mjs and run-gpu-tests.mjs', () => {
  const tools: [string, string][] = [
    ['pack', 'pack.mjs'],
    ['run-gpu-tests', 'run-gpu-tests.mjs'],
  ];
  it.each(tools)('%s --help prints the usage and exits 0', (_, file) => {
    const run = runNode([join(deviceDir, file), '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^usage: node tools/device/${file.replace('.', '\\.')}`));
  });

  const bad: [string, string, string[]][] = [
    ['pack', 'pack.mjs', ['--no-such-flag']],
    ['pack', 'pack.mjs', ['stray']],
    ['pack', 'pack.mjs', ['--bench', 'no-equals-sign']],
    ['pack', 'pack.mjs', ['--out']],
    ['run-gpu-tests', 'run-gpu-tests.mjs', ['--no-such-flag']],
    ['run-gpu-tests', 'run-gpu-tests.mjs', ['--file-timeout', 'soon']],
    ['run-gpu-tests', 'run-gpu-tests.mjs', ['--bundles', join(tmpdir(), 'tilekit-no-such-bundles')]],
  ];
  it.each(bad)('%s (%s) %j: one line "<tool>: <problem>" on stderr, exit 2, no stack', (tool, file, args) => {
    const run = runNode([join(deviceDir, file), ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^${tool}: [^\\n]+\\n$`));
  });
});
