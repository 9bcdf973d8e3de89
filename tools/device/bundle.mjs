// esbuild bundles for the GPU machine, built in ONE esbuild run with code splitting:
//   <out>/gpu-tests/<package>-<spec>.mjs   one entry per *.gpu.spec.ts (node:test registers the
//                                         tests on import; the runner gives each file its own
//                                         process, so a sticky CUDA error stays in its file)
//   <out>/bench-<name>.mjs                one entry per bench entry point
//   <out>/chunks/chunk-<hash>.mjs         the code the entries share (the libraries), once
// Splitting is what keeps the pack small: every spec used to carry its own copy of the libraries.
// Source maps are NOT in the bundles (they were most of the pack): they go to a separate folder
// that stays on the dev machine (<maps>/<path under out>.map, `sources` relative to the map
// file), and tools/device/symbolize.mjs maps stack traces from the GPU machine back with them.
// Sources resolve through the "@tilekit/source" condition; the native addon stays external and is
// found through $TILEKIT_ADDON_PATH or next to the module that loads it (libs/runtime/src/addon.ts:
// addonCandidates), which, after splitting, is a chunk.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE_GROUPS = ['libs', 'kernels', 'examples', 'tools'];

/** Where the shared chunks go, relative to the out folder. */
export const CHUNKS_DIR = 'chunks';
/** Where the GPU spec entries go, relative to the out folder. */
export const GPU_TESTS_DIR = 'gpu-tests';

// Bundled dependencies may still call require(); each output file (entries AND chunks: esbuild
// puts the banner at the top of every file it writes) gets a real one of its own.
const REQUIRE_BANNER =
  "import { createRequire as __tilekitCreateRequire } from 'node:module'; const require = __tilekitCreateRequire(import.meta.url);";

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
 * Removes what an earlier bundling left in `outDir` and `mapsDir` (a spec may have been removed
 * since, and chunk names change with their content): only the folders and `bench-*` files this
 * module writes, so that a `--out` or `--maps` pointing at a shared folder loses nothing else.
 */
export function cleanBundles(outDir, mapsDir) {
  for (const dir of [outDir, mapsDir]) {
    if (!existsSync(dir)) continue;
    for (const sub of [GPU_TESTS_DIR, CHUNKS_DIR]) rmSync(join(dir, sub), { recursive: true, force: true });
    for (const name of readdirSync(dir)) if (/^bench-.*\.mjs(\.map)?$/.test(name)) rmSync(join(dir, name));
  }
}

/** The esbuild entryPoints object: output path (without .mjs) under the out folder → source file. */
function entryPointsOf(specs, specNames, benches) {
  const entryPoints = {};
  specs.forEach((spec, i) => {
    entryPoints[`${GPU_TESTS_DIR}/${specNames[i].slice(0, -'.mjs'.length)}`] = spec;
  });
  for (const [name, entry] of Object.entries(benches)) entryPoints[`bench-${name}`] = entry;
  return entryPoints;
}

/**
 * A map as esbuild wrote it for `jsPath` (sources relative to the bundle's folder), re-based for
 * where it is stored, `mapPath`: sources relative to the map's folder, so that the map still
 * names the right files wherever the maps folder sits.
 */
function rebaseMap(text, jsPath, mapPath) {
  const map = JSON.parse(text);
  const root = resolve(dirname(jsPath), map.sourceRoot ?? '');
  map.sources = map.sources.map((source) => relative(dirname(mapPath), resolve(root, source)).split(sep).join('/'));
  delete map.sourceRoot;
  return JSON.stringify(map);
}

/** Writes esbuild's in-memory outputs: bundles under `outDir`, their maps re-based under `mapsDir`. */
function writeOutputs(outputFiles, outDir, mapsDir) {
  for (const file of outputFiles) {
    const isMap = file.path.endsWith('.map');
    const rel = relative(outDir, file.path);
    const target = isMap ? join(mapsDir, rel) : file.path;
    mkdirSync(dirname(target), { recursive: true });
    if (isMap) writeFileSync(target, rebaseMap(file.text, file.path.slice(0, -'.map'.length), target));
    else writeFileSync(target, file.contents);
  }
}

/**
 * Bundles every GPU spec of the workspace and the given bench entries (`{ name: path }`) into
 * `outDir` in one esbuild run with code splitting, and their source maps into `mapsDir`.
 * Returns `{ specs: [{ spec, bundle }], benches: { name: bundle }, chunks: [file] }`: spec paths
 * relative to `root`, spec bundles as file names in `<outDir>/gpu-tests`, bench bundles and chunks
 * as paths relative to `outDir`. Postcondition: the bundles carry no source map (not even a
 * sourceMappingURL comment), and every bundle has its map at `<mapsDir>/<path under outDir>.map`.
 */
export async function bundleForDevice({ outDir, mapsDir, benches = {}, root = repoRoot }) {
  const { build } = await import('esbuild');
  const specs = findGpuSpecs(root);
  const specNames = gpuSpecBundleNames(specs, root);
  cleanBundles(outDir, mapsDir);
  const result = await build({
    absWorkingDir: root,
    entryPoints: entryPointsOf(specs, specNames, benches),
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@tilekit/source'],
    external: ['*.node'],
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: `${CHUNKS_DIR}/[name]-[hash]`,
    // 'external' writes no sourceMappingURL comment: a map the GPU machine does not have would
    // only make node warn. The source texts stay out too: the sources are here anyway.
    sourcemap: 'external',
    sourcesContent: false,
    write: false,
    logLevel: 'warning',
    banner: { js: REQUIRE_BANNER },
  });
  writeOutputs(result.outputFiles, outDir, mapsDir);
  const chunks = result.outputFiles
    .map((f) => relative(outDir, f.path).split(sep).join('/'))
    .filter((p) => p.startsWith(`${CHUNKS_DIR}/`) && p.endsWith('.mjs'))
    .sort();
  return {
    specs: specs.map((spec, i) => ({ spec: relative(root, spec), bundle: specNames[i] })),
    benches: Object.fromEntries(Object.keys(benches).map((name) => [name, `bench-${name}.mjs`])),
    chunks,
  };
}
