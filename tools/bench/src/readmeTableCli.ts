// README.md's benchmark tables from the committed results (npm run bench:readme):
//   npm run bench:readme                 print the generated block
//   npm run bench:readme -- --write      replace the text between <!-- bench-table:begin --> and <!-- bench-table:end -->
//   npm run bench:readme -- --check      exit 1 with one line when README.md differs from the results
// --readme FILE and --results DIR default to this checkout's README.md and benchmarks/results/.
// Bad input (an unknown option, both modes, a missing file or marker, a malformed result) is one line on stderr, exit 2.
import { relative, resolve } from 'node:path';
import { runCommand } from '@tilekit/host';
import { parseGeneratedFileArgs } from './generatedFileArgs.ts';
import { readBenchResults } from './readmeResults.ts';
import { syncReadmeBenchTable } from './readmeSync.ts';
import { formatReadmeBenchTable } from './readmeTable.ts';

const USAGE = 'usage: readmeTableCli.ts [--write | --check] [--readme README.md] [--results benchmarks/results]';
const root = resolve(import.meta.dirname, '../../..');

/** A path as the messages show it: relative to the working directory. */
const shown = (path: string): string => relative(process.cwd(), path) || path;

await runCommand((io) => {
  const args = parseGeneratedFileArgs(process.argv.slice(2), 'results', USAGE);
  if (args.mode === 'help') return void io.stdout(`${USAGE}\n`);
  const readme = resolve(args.readme ?? resolve(root, 'README.md'));
  const results = resolve(args.path ?? resolve(root, 'benchmarks', 'results'));
  if (args.mode === 'print') return void io.stdout(formatReadmeBenchTable(readBenchResults(results)));
  const { differs, suites } = syncReadmeBenchTable(readme, results, args.mode === 'write');
  if (args.mode === 'check' && differs) {
    io.stderr(`${shown(readme)}: the benchmark table differs from ${shown(results)}/*.json; run npm run bench:readme -- --write\n`);
    return 1;
  }
  io.stdout(`${shown(readme)}: benchmark table of ${suites} suites ${differs ? 'rewritten' : 'up to date'}\n`);
  return 0;
});
