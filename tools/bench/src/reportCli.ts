// Regenerates the markdown table and SVG chart of every given result file and refreshes the README block.
//   npx tsx --conditions=@tilekit/source tools/bench/src/reportCli.ts benchmarks/results/permute.json
import { relative, resolve } from 'node:path';
import { updateReadmeBlock, writeSuiteReports } from './writeReports.ts';

const root = resolve(import.meta.dirname, '../../..');
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: reportCli.ts benchmarks/results/<suite>.json [...]');
  process.exit(2);
}
for (const file of files) {
  const { result, markdownPath, svgPath } = writeSuiteReports(resolve(file));
  const inReadme = updateReadmeBlock(resolve(root, 'README.md'), result, relative(root, svgPath));
  console.log(`${result.suite}: wrote ${relative(root, markdownPath)}, ${relative(root, svgPath)}${inReadme ? ', README block' : ''}`);
}
