#!/usr/bin/env node
// Maps the stack-trace frames of a GPU machine's log back to the .ts sources. The bundles in
// .device/ carry no source maps (they would double the pack); pack.mjs leaves them here in
// .device-maps/, one `<path under .device>.map` per bundle and chunk. A frame such as
//   at check (/home/gpu/run/.device/chunks/chunk-AB12.mjs:812:11)
//   at file:///tmp/x/.device/gpu-tests/gemm-gemm.mjs:40:5
// becomes `libs/gemm/src/foo.ts:77:9`: the bundle is found by the END of its path (the file name
// and the folders above it that exist under the maps folder), so the absolute paths of the GPU
// machine work as well as `.device/...` ones. Frames with no map are left as they are.
//
//   node tools/device/symbolize.mjs [--maps dir] <log file | ->      (the result goes to stdout)
import { existsSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const USAGE = `usage: node tools/device/symbolize.mjs [--maps dir] <log file | ->
Rewrites the frames '<path>/<bundle>.mjs:line:col' of a GPU log (from run-on-gpu.sh, e.g.
.device/out/gpu-tests.log or gpu-tests.json; '-' reads stdin) into 'source.ts:line:col', using the
source maps of the last pack (default --maps .device-maps). A log from an older pack maps wrongly:
symbolize with the maps of the pack that ran.`;

/** Exits 2 with one line on stderr (no stack: the problem is the command line, not this tool). */
function usageError(problem) {
  console.error(`symbolize: ${problem} (see --help)`);
  process.exit(2);
}

/**
 * A frame location: an optional file:// scheme, a path ending in .mjs, then :line:col, or only
 * :line (node names the throwing line so above its source excerpt).
 */
const FRAME = /(file:\/\/)?([^\s()'"`:]+?\.mjs):(\d+)(?::(\d+))?/g;

/** The maps of one folder, loaded on first use and looked up by the tail of a bundle's path. */
class MapFolder {
  #dir;
  #loaded = new Map();

  constructor(dir) {
    this.#dir = dir;
  }

  /** The map file for `bundlePath`: the longest tail of its path with `<tail>.map` in the folder. */
  mapFileFor(bundlePath) {
    const parts = bundlePath.split(/[\\/]/).filter((p) => p !== '' && p !== '.' && p !== '..');
    for (let start = 0; start < parts.length; start++) {
      const candidate = join(this.#dir, ...parts.slice(start)) + '.map';
      if (existsSync(candidate)) return candidate;
    }
    return undefined;
  }

  /** The parsed SourceMap of `mapFile` (cached). */
  load(mapFile) {
    if (!this.#loaded.has(mapFile)) this.#loaded.set(mapFile, new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))));
    return this.#loaded.get(mapFile);
  }
}

/** How a source path is shown: relative to the repo when inside it, else absolute. */
function displayPath(absolute) {
  const rel = relative(repoRoot, absolute);
  return rel.startsWith('..') || isAbsolute(rel) ? absolute : rel;
}

/**
 * The source line of a whole bundle line (1-based): that of the line's last mapping, or
 * undefined when the line has none (the lookup would otherwise land on an earlier line).
 */
function lineOrigin(map, line) {
  const entry = map.findEntry(line - 1, Number.MAX_SAFE_INTEGER);
  if (entry.generatedLine !== line - 1 || !entry.originalSource) return undefined;
  return { fileName: entry.originalSource, where: `${entry.originalLine + 1}` };
}

/**
 * The source position of a 1-based line and column of a bundle, or undefined: that of the nearest
 * mapping at or before it, as node's own --enable-source-maps reports it. (findOrigin would add the
 * distance from that mapping, which is off by the indentation where esbuild maps a statement from
 * its line's start.)
 */
function columnOrigin(map, line, column) {
  const entry = map.findEntry(line - 1, column - 1);
  if (!entry.originalSource) return undefined;
  return { fileName: entry.originalSource, where: `${entry.originalLine + 1}:${entry.originalColumn + 1}` };
}

/**
 * `source.ts:line:col` (or `source.ts:line` when `column` is undefined) for a 1-based position in
 * the bundle at `bundlePath`, or undefined when no map covers it. Sources in the maps are relative
 * to the map file (pack.mjs writes them so).
 */
function originOf(folder, bundlePath, line, column) {
  const mapFile = folder.mapFileFor(bundlePath);
  if (mapFile === undefined) return undefined;
  const map = folder.load(mapFile);
  const origin = column === undefined ? lineOrigin(map, line) : columnOrigin(map, line, column);
  return origin && `${displayPath(resolve(dirname(mapFile), origin.fileName))}:${origin.where}`;
}

/** `text` with every frame that a map covers rewritten; also counts mapped and unmapped frames. */
export function symbolize(text, mapsDir) {
  const folder = new MapFolder(mapsDir);
  const counts = { mapped: 0, unmapped: 0 };
  const result = text.replace(FRAME, (whole, scheme, path, line, column) => {
    const bundlePath = scheme ? decodeURIComponent(path) : path;
    const origin = originOf(folder, bundlePath, Number(line), column === undefined ? undefined : Number(column));
    counts[origin ? 'mapped' : 'unmapped']++;
    return origin ?? whole;
  });
  return { text: result, ...counts };
}

/** The command line, checked: `{ input, mapsDir }`. */
function parseCli(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { maps: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    usageError(error.message);
  }
  if (parsed.values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (parsed.positionals.length !== 1) usageError(`expects one log file (or - for stdin), got ${parsed.positionals.length}`);
  const mapsDir = resolve(parsed.values.maps ?? join(repoRoot, '.device-maps'));
  if (!existsSync(mapsDir) || !statSync(mapsDir).isDirectory())
    usageError(`no source maps folder ${mapsDir}: run node tools/device/pack.mjs first, or pass --maps`);
  return { input: parsed.positionals[0], mapsDir };
}

function main() {
  const { input, mapsDir } = parseCli(process.argv.slice(2));
  let text;
  try {
    text = readFileSync(input === '-' ? 0 : input, 'utf8');
  } catch (error) {
    usageError(`cannot read ${input === '-' ? 'stdin' : input}: ${error.code ?? error.message}`);
  }
  const { text: out, mapped, unmapped } = symbolize(text, mapsDir);
  process.stdout.write(out);
  console.error(
    `symbolize: ${mapped} frames mapped to sources${unmapped > 0 ? `, ${unmapped} without a map in ${mapsDir} (left as they were)` : ''}`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
