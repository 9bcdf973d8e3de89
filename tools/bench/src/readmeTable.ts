// The README's benchmark tables, generated from the committed results (benchmarks/results/*.json):
// per suite a compact table of our figure against the best torch baseline, its provenance, and
// links to the full table and chart. README.md holds this text between the markers of
// readmeBlock.ts; readmeTable.spec.ts regenerates it and compares.
import { ArgumentError } from '@tilekit/numeric';
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
import { formatProvenanceLine } from './readmeProvenance.ts';
import { baselineMarkedInvalid, caseMarkedNoisy, msSpreadOf, type MsSpread } from './resultExtras.ts';

const METRIC_LABEL: Record<Metric, string> = { tflops: 'TFLOP/s', gbps: 'GB/s' };

/** Spreads ((max − min) / median) above this are set in bold: the harness's MAX_SPREAD (timing/measureLaunches.ts). */
export const SPREAD_WARN = 0.05;

/** Where the full reports of a suite lie, relative to the README. */
export const RESULTS_LINK_DIR = 'benchmarks/results';

/** The fastest baseline of a case that ran and is a torch one (its name starts with `torch`). */
export interface TorchBest {
  readonly name: string;
  readonly value: number;
  readonly invalid: boolean;
  readonly spread?: MsSpread;
  readonly ms: number;
}

/**
 * The torch baseline with the highest `metric` figure; undefined when none ran. One that failed its
 * own validation still counts (marked `invalid`), so that ours is never compared with a slower one.
 */
export function bestTorchBaseline(c: BenchCase, metric: Metric): TorchBest | undefined {
  let best: TorchBest | undefined;
  for (const [name, m] of Object.entries(c.baselines)) {
    if (!name.startsWith('torch') || isBaselineError(m)) continue;
    const value = m[metric];
    if (value === undefined || (best !== undefined && value <= best.value)) continue;
    const spread = msSpreadOf(m);
    best = { name, value, ms: m.ms, invalid: baselineMarkedInvalid(m), ...(spread === undefined ? {} : { spread }) };
  }
  return best;
}

/** A TFLOP/s or GB/s figure: whole above 100, one decimal above 10, else two. */
export function formatFigure(value: number | undefined): string {
  if (value === undefined) return '–';
  return value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2);
}

/** "0.281–0.290 ms (3.2%)": the repetitions' range and (max − min) / median, bold above SPREAD_WARN or when `noisy`. */
export function formatSpread(medianMs: number, spread: MsSpread | undefined, noisy = false): string {
  if (spread === undefined) return '–';
  const share = (spread.max - spread.min) / medianMs;
  const percent = `${(share * 100).toFixed(1)}%`;
  return `${spread.min.toPrecision(3)}–${spread.max.toPrecision(3)} ms (${noisy || share > SPREAD_WARN ? `**${percent}**` : percent})`;
}

/** Our figure over the best torch figure; INVALID for a case that failed validation (never a win). */
function ratioCell(c: BenchCase, ours: number | undefined, best: TorchBest | undefined): string {
  if (!c.valid) return 'INVALID';
  return ours === undefined || best === undefined ? '–' : `${(ours / best.value).toFixed(2)}×`;
}

/** The columns of a suite's table; the spread columns only where some case recorded a spread. */
function columns(result: BenchSuiteResult, metric: Metric): { header: string[]; ourSpread: boolean; torchSpread: boolean } {
  const ourSpread = result.cases.some((c) => msSpreadOf(c.ours) !== undefined);
  const torchSpread = result.cases.some((c) => bestTorchBaseline(c, metric)?.spread !== undefined);
  const unit = METRIC_LABEL[metric];
  const header = ['case', `ours ${unit}`, `best torch ${unit}`, 'best torch', 'ours / best torch'];
  if (ourSpread) header.push('ours spread');
  if (torchSpread) header.push('torch spread');
  header.push('valid');
  return { header, ourSpread, torchSpread };
}

/** The fastest torch baseline of a case timed without a figure (by time), as a TorchBest whose value is its time. */
function fastestTorchBaseline(c: BenchCase): TorchBest | undefined {
  const best = fastestBaseline(c, (name) => name.startsWith('torch'));
  if (best === undefined) return undefined;
  const spread = msSpreadOf(best.m);
  return {
    name: best.name,
    value: best.m.ms,
    ms: best.m.ms,
    invalid: baselineMarkedInvalid(best.m),
    ...(spread === undefined ? {} : { spread }),
  };
}

/** One row per case; a case timed without a figure shows times, and the ratio is torch's time over ours. */
function caseRow(c: BenchCase, metric: Metric, spreads: { ourSpread: boolean; torchSpread: boolean }): string[] {
  const timed = !hasAnyFigure(c);
  const ours = c.ours[metric];
  const best = timed ? fastestTorchBaseline(c) : bestTorchBaseline(c, metric);
  const cells = [
    c.name,
    timed ? formatTime(c.ours.ms) : formatFigure(ours),
    timed && best !== undefined ? formatTime(best.ms) : formatFigure(best?.value),
    best === undefined ? '–' : best.name + (best.invalid ? ' (invalid)' : ''),
  ];
  const timedRatio = !c.valid ? 'INVALID' : best === undefined ? '–' : `${(best.ms / c.ours.ms).toFixed(2)}×`;
  cells.push(timed ? timedRatio : ratioCell(c, ours, best));
  if (spreads.ourSpread) cells.push(formatSpread(c.ours.ms, msSpreadOf(c.ours), caseMarkedNoisy(c)));
  if (spreads.torchSpread) cells.push(best === undefined ? '–' : formatSpread(best.ms, best.spread));
  cells.push(c.valid ? 'yes' : '**no**');
  return cells;
}

/** The markdown table of one suite. */
export function formatSuiteTable(result: BenchSuiteResult): string {
  const metric = suiteMetric(result);
  const { header, ...spreads } = columns(result, metric);
  const align = header.map((h, i) => (i === 0 || h === 'best torch' ? '---' : '---:'));
  const rows = result.cases.map((c) => caseRow(c, metric, spreads));
  return [header, align, ...rows].map((cells, i) => (i === 1 ? `|${cells.join('|')}|` : `| ${cells.join(' | ')} |`)).join('\n');
}

/** "21 cases, 21 valid" and what the result lacks or could not run: baselines that errored, repetitions. */
function countsOf(result: BenchSuiteResult): string {
  const valid = result.cases.filter((c) => c.valid).length;
  const errors = result.cases.reduce((n, c) => n + Object.values(c.baselines).filter(isBaselineError).length, 0);
  const parts = [`${result.cases.length} cases, ${valid} valid`];
  if (errors > 0) parts.push(`${errors} baseline runs could not run (their errors are in the full table)`);
  if (!result.cases.some((c) => msSpreadOf(c.ours) !== undefined))
    parts.push('a single run per case (no min–max over repetitions recorded)');
  return parts.join('; ');
}

/** The counts, then links to the suite's full table (every baseline, errors) and chart. */
export function formatSuiteSummary(result: BenchSuiteResult): string {
  const stem = `${RESULTS_LINK_DIR}/${result.suite}`;
  return `${countsOf(result)} · every baseline: [${result.suite}.md](${stem}.md) · chart: [${result.suite}.svg](${stem}.svg)`;
}

/** A suite's section: heading, provenance line, summary with links, table. */
export function formatSuiteSection(result: BenchSuiteResult): string {
  return [`### ${result.suite}`, formatProvenanceLine(result), formatSuiteSummary(result), formatSuiteTable(result)].join('\n\n');
}

/**
 * The README's benchmark block (the text between its markers): a note that it is generated, then
 * one section per result in the order given. Throws ArgumentError for no results or a suite given twice.
 */
export function formatReadmeBenchTable(results: readonly BenchSuiteResult[]): string {
  if (results.length === 0) throw new ArgumentError('results', 'must hold at least one suite result', results);
  const suites = results.map((r) => r.suite);
  const twice = suites.find((s, i) => suites.indexOf(s) !== i);
  if (twice !== undefined) throw new ArgumentError('results', `must hold each suite once (${twice} is given twice)`, suites);
  const note = '<!-- generated from benchmarks/results/*.json by `npm run bench:readme -- --write`; do not edit by hand -->';
  return `${[note, ...results.map(formatSuiteSection)].join('\n\n')}\n`;
}
