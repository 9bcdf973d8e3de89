// esbuild bundles for the GPU machine: one ESM file per *.gpu.spec.ts of the workspace (node:test
// registers the tests on import; the runner gives each file its own process, so a sticky CUDA
// error in one file cannot fail the others), and bench entry points one file each. Sources are
// resolved through the "@tilekit/source" condition; the native addon stays external and is found
// next to the bundle, or at $TILEKIT_ADDON_PATH (libs/runtime/src/addon.ts: addonCandidates).
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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

/** The package directory (`libs/<name>`, ...) that holds `file`, and its short name (package.json name without `@tilekit/`). */
function packageOf(file, root) {
  const [group, dir] = relative(root, file).split(sep);
  const pkgDir = join(root, group, dir);
  let name = dir;
  try {
    name = String(JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).name ?? dir).replace(/^@tilekit\//, '');
  } catch {
    // no readable package.json: the directory name
  }
  return { pkgDir, name: name.replace(/[^A-Za-z0-9._-]/g, '_') };
}

/**
 * The bundle file name of each GPU spec: `<package>-<spec>.mjs` (`codegen-intrinsics.mjs` for
 * libs/codegen/src/intrinsics/intrinsics.gpu.spec.ts). Two specs of one package with the same file
 * name (in different folders) get their folder path under src/ too (`tile-a.b.x.mjs`).
 * Postcondition: the names are distinct and use only letters, digits, '.', '_' and '-'.
 */
export function gpuSpecBundleNames(specs, root = repoRoot) {
  const clean = (s) => s.replace(/[^A-Za-z0-9._-]/g, '_');
  const short = specs.map((spec) => `${packageOf(spec, root).name}-${clean(basename(spec, '.gpu.spec.ts'))}`);
  const names = specs.map((spec, i) => {
    if (short.indexOf(short[i]) === short.lastIndexOf(short[i])) return `${short[i]}.mjs`;
    const { pkgDir, name } = packageOf(spec, root);
    const path = relative(join(pkgDir, 'src'), spec).slice(0, -'.gpu.spec.ts'.length);
    return `${name}-${clean(path.split(sep).join('.'))}.mjs`;
  });
  if (new Set(names).size !== names.length) throw new Error(`GPU spec bundle names collide: ${names.join(', ')}`);
  return names;
}

/**
 * Bundles every GPU spec into its own file in `outDir` (created if missing); returns
 * `[{ spec, bundle }]`: the spec path relative to the repo and the bundle's file name in `outDir`.
 */
export async function bundleGpuTests(outDir, root = repoRoot) {
  const { build } = await import('esbuild');
  const specs = findGpuSpecs(root);
  const names = gpuSpecBundleNames(specs, root);
  mkdirSync(outDir, { recursive: true });
  await Promise.all(specs.map((spec, i) => build({ ...options(join(outDir, names[i])), entryPoints: [spec] })));
  return specs.map((spec, i) => ({ spec: relative(root, spec), bundle: names[i] }));
}

/** Bundles one bench entry point into `outfile`. */
export async function bundleEntry(entry, outfile) {
  const { build } = await import('esbuild');
  await build({ ...options(outfile), entryPoints: [entry] });
}
