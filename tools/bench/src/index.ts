export * from './benchResult.ts';
export * from './flops.ts';
export { baselineNames, bestBaseline, formatBenchMarkdown, formatOtherFigures } from './markdownReport.ts';
export { renderBenchSvg } from './svgChart.ts';
export { writeSuiteReports } from './writeReports.ts';
export { BENCH_TABLE_BEGIN, BENCH_TABLE_END, extractMarkedBlock, replaceMarkedBlock } from './readmeBlock.ts';
export { formatReadmeBenchTable, formatSuiteSection } from './readmeTable.ts';
export {
  runSuite,
  withOwnChecks,
  type BenchSuite,
  type OurCaseResult,
  type OwnCheck,
  type RunSuiteOptions,
  type SuiteCase,
} from './runSuite.ts';
