// Prints vitest's JSON report as one plain closing line: "tests: N passed, N failed, N skipped".
//   node tools/workspace/src/printTestTotals.mjs [test-output/vitest.json]
// A missing report is a failed run (stdout line, exit 1); bad arguments or a report that is not
// vitest JSON are usage errors (one line on stderr, exit 2).
import { existsSync, readFileSync } from 'node:fs';

const USAGE = 'usage: printTestTotals.mjs [test-output/vitest.json]';

/** One line on stderr, exit 2: the CLI contract for input the user got wrong. */
function usageError(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

/** The report's JSON, or a usage error naming the file. */
function readReport(path) {
  let report;
  try {
    report = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (!(error instanceof SyntaxError) && error.code !== 'EISDIR') throw error;
    usageError(`${path}: is not a vitest JSON report (${error.message.split('\n')[0]})`);
  }
  if (typeof report?.numPassedTests !== 'number') usageError(`${path}: is not a vitest JSON report (no numPassedTests)`);
  return report;
}

const args = process.argv.slice(2);
if (args.length > 1 || args.some((a) => a.startsWith('-'))) usageError(`unexpected arguments ${JSON.stringify(args.join(' '))} (${USAGE})`);
const reportPath = args[0] ?? 'test-output/vitest.json';
if (!existsSync(reportPath)) {
  console.log(`tests: no report at ${reportPath} (the run stopped before the unit tests)`);
  process.exit(1);
}
const report = readReport(reportPath);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
