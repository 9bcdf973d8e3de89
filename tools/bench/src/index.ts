export * from './benchResult.ts';
export * from './flops.ts';
export { baselineNames, bestBaseline, formatBenchMarkdown } from './markdownReport.ts';
export { renderBenchSvg } from './svgChart.ts';
export { updateReadmeBlock, writeSuiteReports } from './writeReports.ts';
export { runSuite, type BenchSuite, type OurCaseResult, type RunSuiteOptions, type SuiteCase } from './runSuite.ts';
