// Prints vitest's JSON report as one plain closing line: "tests: N passed, N failed, N skipped".
import { existsSync, readFileSync } from 'node:fs';

const reportPath = process.argv[2] ?? 'test-output/vitest.json';
if (!existsSync(reportPath)) {
  console.log(`tests: no report at ${reportPath} (the run stopped before the unit tests)`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
