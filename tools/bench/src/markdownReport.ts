import {
  fastestBaseline,
  formatTime,
  hasAnyFigure,
  isBaselineError,
  suiteMetric,
  type BenchCase,
  type BenchSuiteResult,
  type Metric,
} from './benchResult.ts';
import { formatSparseSummary } from './sparseSummary.ts';

const metricLabel: Record<Metric, string> = { tflops: 'TFLOP/s', gbps: 'GB/s' };

/** Every baseline name that appears in any case, in first-seen order. */
export function baselineNames(result: BenchSuiteResult): string[] {
  const names: string[] = [];
  for (const c of result.cases) for (const name of Object.keys(c.baselines)) if (!names.includes(name)) names.push(name);
  return names;
}

/** The fastest baseline that ran, by the suite's metric; undefined when none did. */
export function bestBaseline(c: BenchCase, metric: Metric): { name: string; value: number } | undefined {
  let best: { name: string; value: number } | undefined;
  for (const [name, m] of Object.entries(c.baselines)) {
    if (isBaselineError(m)) continue;
    const value = m[metric];
    if (value !== undefined && (best === undefined || value > best.value)) best = { name, value };
  }
  return best;
}

function fmt(value: number | undefined): string {
  if (value === undefined) return '–';
  return value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2);
}

/**
 * Figures the suite's table does not show, for suites whose cases differ in kind (dsa-indexer: GB/s for
 * every case, TFLOP/s of the prefill cases, the decode indexer's share of the HBM read bandwidth): one row
 * per case that has TFLOP/s while the suite compares GB/s, or an `ours.hbmFraction`. Undefined when none does.
 */
export function formatOtherFigures(result: BenchSuiteResult): string | undefined {
  const metric = suiteMetric(result);
  const rows = result.cases.flatMap((c) => {
    const tflops = metric === 'gbps' ? c.ours.tflops : undefined;
    if (tflops === undefined && c.ours.hbmFraction === undefined) return [];
    const best = tflops === undefined ? undefined : bestBaseline(c, 'tflops');
    const ratio = !c.valid ? 'INVALID' : tflops !== undefined && best ? `${(tflops / best.value).toFixed(2)}× (${best.name})` : '–';
    const hbm = c.ours.hbmFraction === undefined ? '–' : `${(100 * c.ours.hbmFraction).toFixed(1)}%`;
    return [[c.name, fmt(tflops), best === undefined ? '–' : `${fmt(best.value)} (${best.name})`, ratio, hbm]];
  });
  if (rows.length === 0) return undefined;
  const header = ['case', 'ours TFLOP/s', 'best baseline TFLOP/s', 'ours / best', 'ours / HBM read bandwidth'];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/**
 * Cases whose result is a time, not the suite's figure (dsa's decode step: no FLOP count applies): one row each with
 * our median time, each baseline's and our speed-up over the fastest baseline that ran. Undefined when no case is so.
 */
export function formatTimedCases(result: BenchSuiteResult): string | undefined {
  const timed = result.cases.filter((c) => !hasAnyFigure(c));
  if (timed.length === 0) return undefined;
  const names = [...new Set(timed.flatMap((c) => Object.keys(c.baselines)))];
  const rows = timed.map((c) => {
    const best = fastestBaseline(c);
    const ratio = !c.valid ? 'INVALID' : best === undefined ? '–' : `${(best.m.ms / c.ours.ms).toFixed(2)}× (${best.name})`;
    const cells = names.map((n) => {
      const m = c.baselines[n];
      return m === undefined ? '–' : isBaselineError(m) ? 'error' : formatTime(m.ms);
    });
    return [c.name, formatTime(c.ours.ms), ...cells, ratio, c.valid ? 'yes' : '**no**'];
  });
  const header = ['case', 'ours', ...names, 'ours faster by', 'valid'];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/**
 * A markdown table: one row per case with our figure, each baseline's (or "error"), and our speed
 * relative to the best baseline that ran. An invalid case is marked, never shown as a win.
 */
export function formatBenchMarkdown(result: BenchSuiteResult): string {
  const metric = suiteMetric(result);
  const names = baselineNames(result);
  const header = ['case', `ours ${metricLabel[metric]}`, ...names.map((n) => `${n} ${metricLabel[metric]}`), 'ours / best', 'valid'];
  const rows = result.cases.filter(hasAnyFigure).map((c) => {
    const ours = c.ours[metric];
    const best = bestBaseline(c, metric);
    const ratio = ours !== undefined && best ? `${(ours / best.value).toFixed(2)}× (${best.name})` : '–';
    const cells = names.map((n) => {
      const m = c.baselines[n];
      if (m === undefined) return '–';
      return isBaselineError(m) ? 'error' : fmt(m[metric]);
    });
    return [c.name, fmt(ours), ...cells, c.valid ? ratio : 'INVALID', c.valid ? 'yes' : '**no**'];
  });
  const lines = [
    `**${result.suite}** on ${result.device}, ${result.date}, commit \`${result.commit.slice(0, 10)}\``,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
  const errors = result.cases.flatMap((c) =>
    Object.entries(c.baselines).flatMap(([n, m]) => (isBaselineError(m) ? [`- ${c.name} / ${n}: ${m.error}`] : [])),
  );
  if (errors.length > 0) lines.push('', 'Baselines that could not run:', ...errors);
  const other = formatOtherFigures(result);
  if (other !== undefined)
    lines.push(
      '',
      'Other figures: TFLOP/s where the table shows GB/s, and the share of the HBM read bandwidth measured in the same run.',
      '',
      other,
    );
  const timed = formatTimedCases(result);
  if (timed !== undefined) lines.push('', 'Cases timed, not counted (median time per call; no FLOP figure applies):', '', timed);
  const sparse = formatSparseSummary(result);
  if (sparse !== undefined)
    lines.push(
      '',
      'Sparse attention: the prediction stage and the attention apart (ms), the sparsity achieved, speedups over our dense forward.',
      '',
      sparse,
    );
  return `${lines.join('\n')}\n`;
}
