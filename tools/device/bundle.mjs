// esbuild bundles for the GPU machine: every *.gpu.spec.ts of the workspace in one ESM file
// (node:test registers the tests on import), and bench entry points one file each. Sources are
// resolved through the "@tilekit/source" condition; the native addon stays external and is
// found next to the bundle at run time (libs/runtime/src/addon.ts: addonCandidates).
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE_GROUPS = ['libs', 'kernels', 'examples', 'tools'];

function walk(dir, predicate, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, predicate, out);
    else if (predicate(entry.name)) out.push(path);
  }
  return out;
}

/** Every `src/**\/*.gpu.spec.ts` under libs/, kernels/, examples/ and tools/, sorted. */
export function findGpuSpecs(root = repoRoot) {
  const specs = [];
  for (const group of PACKAGE_GROUPS) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) walk(join(groupDir, pkg, 'src'), (n) => n.endsWith('.gpu.spec.ts'), specs);
  }
  return specs.sort();
}

/** Every `src/**\/*.bench.ts` (bench entry points), keyed by file name without `.bench.ts`. */
export function findBenchEntries(root = repoRoot) {
  const entries = {};
  for (const group of PACKAGE_GROUPS) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) {
      for (const file of walk(join(groupDir, pkg, 'src'), (n) => n.endsWith('.bench.ts'))) {
        entries[file.slice(file.lastIndexOf('/') + 1, -'.bench.ts'.length)] = file;
      }
    }
  }
  return entries;
}

function options(outfile) {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@tilekit/source'],
    external: ['*.node'],
    outfile,
    sourcemap: 'inline',
    logLevel: 'warning',
    // Some dependencies may still call require(); give the ESM bundle a real one.
    banner: { js: "import { createRequire as __tilekitCreateRequire } from 'node:module'; const require = __tilekitCreateRequire(import.meta.url);" },
  };
}

/** Bundles all GPU specs into `outfile`; returns the spec paths (relative to the repo). */
export async function bundleGpuTests(outfile, root = repoRoot) {
  const { build } = await import('esbuild');
  const specs = findGpuSpecs(root);
  const contents = specs.map((spec) => `import ${JSON.stringify(spec)};`).join('\n');
  await build({
    ...options(outfile),
    stdin: { contents: contents || 'export {};', resolveDir: root, sourcefile: 'gpu-tests.entry.ts', loader: 'ts' },
  });
  return specs.map((spec) => relative(root, spec));
}

/** Bundles one bench entry point into `outfile`. */
export async function bundleEntry(entry, outfile) {
  const { build } = await import('esbuild');
  await build({ ...options(outfile), entryPoints: [entry] });
}
