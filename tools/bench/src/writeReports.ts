import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseBenchResult, type BenchSuiteResult } from './benchResult.ts';
import { formatBenchMarkdown } from './markdownReport.ts';
import { renderBenchSvg } from './svgChart.ts';

/** Writes `<suite>.md` and `<suite>.svg` beside a result JSON; returns their paths. */
export function writeSuiteReports(jsonPath: string): { result: BenchSuiteResult; markdownPath: string; svgPath: string } {
  const result = parseBenchResult(JSON.parse(readFileSync(jsonPath, 'utf8')));
  const stem = join(dirname(jsonPath), basename(jsonPath, '.json'));
  const markdownPath = `${stem}.md`;
  const svgPath = `${stem}.svg`;
  writeFileSync(markdownPath, formatBenchMarkdown(result));
  writeFileSync(svgPath, renderBenchSvg(result));
  return { result, markdownPath, svgPath };
}

/**
 * Replaces the README block between `<!-- bench:SUITE:start -->` and `<!-- bench:SUITE:end -->`
 * with the suite's table and a link to its chart, so the README's table is always the committed one.
 * Returns false when the README has no such block.
 */
export function updateReadmeBlock(readmePath: string, result: BenchSuiteResult, chartLink: string): boolean {
  if (!existsSync(readmePath)) return false;
  const text = readFileSync(readmePath, 'utf8');
  const start = `<!-- bench:${result.suite}:start -->`;
  const end = `<!-- bench:${result.suite}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) return false;
  const block = `${start}\n${formatBenchMarkdown(result)}\n![${result.suite} chart](${chartLink})\n${end}`;
  writeFileSync(readmePath, text.slice(0, i) + block + text.slice(j + end.length));
  return true;
}
