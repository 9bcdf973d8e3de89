// The gfx942 resource table (issue 24): compiles every gfx942 instance with clang-19 and writes
// benchmarks/results/gfx942-resources.md and README.md's block between <!-- gfx942-resources:begin -->
// and <!-- gfx942-resources:end -->.
//   npm run gfx942:resources                 print the table
//   npm run gfx942:resources -- --write      rewrite both
//   npm run gfx942:resources -- --check      exit 1 with one line when either differs
// Without clang-19 (TILEKIT_CLANG, clang-19, /usr/lib/llvm-19/bin/clang-19), bad options or a README
// without the markers: one line on stderr, exit 2.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { ArgParseError, runCommand } from '@tilekit/host';
import { compileGfx942, findGfx942Clang, GEMM_GFX942_CATALOG, type Gfx942ResourceRow } from '@tilekit/kernel-gemm';
import { gfx942ResourceFile, gfx942ResourceReadmeBlock, GFX942_RESOURCES_MARKERS } from './gfx942ResourceDocument.ts';
import { parseGeneratedFileArgs } from './generatedFileArgs.ts';
import { extractMarkedBlock, replaceMarkedBlock } from './readmeBlock.ts';

const USAGE = 'usage: gfx942ResourcesCli.ts [--write | --check] [--readme README.md] [--out benchmarks/results/gfx942-resources.md]';
const root = resolve(import.meta.dirname, '../../..');
const shown = (path: string): string => relative(process.cwd(), path) || path;

/** Every gfx942 catalog, in table order. */
const CATALOGS = [{ catalog: 'gemm', instances: GEMM_GFX942_CATALOG }] as const;

function compileAll(clang: string, progress: (line: string) => void): Gfx942ResourceRow[] {
  const all = CATALOGS.flatMap(({ catalog, instances }) => instances.map((instance) => ({ catalog, instance })));
  return all.map(({ catalog, instance }, i) => {
    progress(`[gfx942 ${i + 1}/${all.length}] ${instance.name}\n`);
    return { catalog, resources: compileGfx942(instance, clang).resources };
  });
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

await runCommand((io) => {
  const args = parseGeneratedFileArgs(process.argv.slice(2), 'out', USAGE);
  if (args.mode === 'help') return void io.stdout(`${USAGE}\n`);
  const readmePath = resolve(args.readme ?? resolve(root, 'README.md'));
  const outPath = resolve(args.path ?? resolve(root, 'benchmarks', 'results', 'gfx942-resources.md'));
  const readme = readFileSync(readmePath, 'utf8');
  extractMarkedBlock(readme, shown(readmePath), GFX942_RESOURCES_MARKERS); // the markers first: bad input before compiling
  const clang = findGfx942Clang();
  if (clang === undefined)
    throw new ArgParseError('clang', 'clang-19 not found (set TILEKIT_CLANG): the gfx942 kernels cannot be compiled');
  const rows = compileAll(clang, io.stderr);
  if (args.mode === 'print') return void io.stdout(`${gfx942ResourceFile(rows)}`);
  const file = gfx942ResourceFile(rows);
  const block = replaceMarkedBlock(readme, gfx942ResourceReadmeBlock(rows), shown(readmePath), GFX942_RESOURCES_MARKERS);
  const differs = readOr(outPath, '') !== file || block !== readme;
  if (args.mode === 'check') {
    if (!differs)
      return void io.stdout(`${shown(outPath)} and ${shown(readmePath)}: gfx942 resources of ${rows.length} instances up to date\n`);
    io.stderr(
      `${shown(outPath)} or ${shown(readmePath)}: the gfx942 resources differ from a fresh compile; run npm run gfx942:resources -- --write\n`,
    );
    return 1;
  }
  writeFileSync(outPath, file);
  writeFileSync(readmePath, block);
  io.stdout(
    `${shown(outPath)} and ${shown(readmePath)}: gfx942 resources of ${rows.length} instances ${differs ? 'rewritten' : 'up to date'}\n`,
  );
  return 0;
});
