import { readFileSync, writeFileSync } from 'node:fs';
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
