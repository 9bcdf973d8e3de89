// Regenerates the markdown table and SVG chart of every given result file, then README.md's benchmark
// block from every committed result (readmeSync.ts; the same as npm run bench:readme -- --write).
//   npx tsx --conditions=@tilekit/source tools/bench/src/reportCli.ts benchmarks/results/permute.json
// Bad input (no file, an option, a missing or non-JSON file, a malformed result) is one line on stderr, exit 2.
import { readFileSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { ArgParseError, runCommand } from '@tilekit/host';
import { ArgumentError } from '@tilekit/numeric';
import { parseBenchResult } from './benchResult.ts';
import { syncReadmeBenchTable } from './readmeSync.ts';
import { writeSuiteReports } from './writeReports.ts';

const USAGE = 'usage: reportCli.ts benchmarks/results/<suite>.json [...]';
const root = resolve(import.meta.dirname, '../../..');

/** The result files on the command line; throws ArgParseError for none or for an option. */
function resultFiles(argv: readonly string[]): string[] {
  const option = argv.find((a) => a.startsWith('-'));
  if (option !== undefined) throw new ArgParseError(option, `unknown option ${option} (${USAGE})`);
  if (argv.length === 0) throw new ArgParseError('files', `no result file given (${USAGE})`);
  return [...argv];
}

/** Throws ArgumentError naming `file` when it is not a bench result JSON file (checked before any report is written). */
function checkResultFile(file: string): void {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isFile())
    throw new ArgumentError(file, `${stat === undefined ? 'no such file' : 'is not a file'} (expected a bench result JSON)`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
    parseBenchResult(value);
  } catch (error) {
    if (error instanceof SyntaxError) throw new ArgumentError(file, `is not JSON: ${error.message}`);
    if (error instanceof ArgumentError) throw new ArgumentError(file, `is not a bench result: ${error.message}`);
    throw error;
  }
}

await runCommand((io) => {
  if (process.argv.slice(2).some((a) => a === '-?' || a === '-h' || a === '--help')) return void io.stdout(`${USAGE}\n`);
  const files = resultFiles(process.argv.slice(2));
  files.forEach(checkResultFile);
  for (const file of files.map((f) => resolve(f))) {
    const { result, markdownPath, svgPath } = writeSuiteReports(file);
    io.stdout(`${result.suite}: wrote ${relative(root, markdownPath)}, ${relative(root, svgPath)}\n`);
  }
  const { differs, suites } = syncReadmeBenchTable(resolve(root, 'README.md'), resolve(root, 'benchmarks', 'results'), true);
  io.stdout(`README.md: benchmark table of ${suites} suites ${differs ? 'rewritten' : 'up to date'}\n`);
});
