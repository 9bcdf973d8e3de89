import { ArgumentError } from '@tilekit/numeric';
import type { ErrorStats, Provenance, TimingPlan, TimingStats } from './referenceProtocol.ts';
import type { CaseVerdict } from './validate/judgeOutputs.ts';

/**
 * One suite's results, in the format of docs/benchmarks.md: our kernel and each reference
 * measured in the same device command, every case validated. `gbps` is added for memory-bound suites
 * (copies, permutes) where bandwidth, not FLOPs, is the figure of merit.
 */
export interface Measurement {
  /** Median per-launch time over the repetitions (ms), with their min and max. */
  readonly ms: number;
  readonly msMin?: number;
  readonly msMax?: number;
  /** Per-launch time of each repetition, and the launches each repetition timed back to back. */
  readonly reps?: readonly number[];
  readonly launchesPerRep?: number;
  readonly tflops?: number;
  readonly gbps?: number;
  /** Timings thrown away because their spread exceeded 5% (timing/measureLaunches). */
  readonly reruns?: number;
  /** Short cases: the same timing with the L2 flushed before every launch. */
  readonly flushed?: TimingStats;
  /** How a baseline was called when not in its plain form (e.g. looped over sequences). */
  readonly form?: string;
  /** A baseline's error against the fp32 reference, per output. */
  readonly errors?: Readonly<Record<string, ErrorStats>>;
  /** A torch baseline judged by the case's limits (a wrong baseline is no yardstick for speed either). */
  readonly valid?: boolean;
}

export interface OurMeasurement extends Measurement {
  readonly instance: string;
  /** Memory-bound kernels: bytes read per second ÷ the HBM read bandwidth measured in the same run (dsa-indexer's `hbm-read`). */
  readonly hbmFraction?: number;
}

/** A reference that could not run a case keeps its error string instead of being dropped. */
export type BaselineMeasurement = Measurement | { readonly error: string };

export interface BenchCase {
  readonly name: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly ours: OurMeasurement;
  readonly baselines: Readonly<Record<string, BaselineMeasurement>>;
  readonly valid: boolean;
  /** The largest max-abs error of our outputs against the fp32 reference. */
  readonly maxAbsErr?: number;
  /** How the case was judged: per output our error, torch's, the limit, and the baseline whose error set it. */
  readonly validation?: CaseVerdict & { readonly against: string };
  /** (max − min) / median of our timing, and whether it stayed above 5% after the re-runs. */
  readonly spread?: number;
  readonly noisy?: boolean;
  /** Checks our side made itself (benchSuite OurCaseResult.checks); `valid` requires every one. */
  readonly checks?: Readonly<Record<string, { readonly ok: boolean; readonly detail: string }>>;
  /** What the reference could not decide and excused (referenceProtocol CheckReply.excused). */
  readonly excused?: Readonly<Record<string, { readonly maxExcuse: number; readonly elements: number }>>;
  readonly note?: string;
}

/** One device call's share of a record measured in several calls (a resumed run): its date, machine and cases. */
export interface BenchRunPart {
  readonly date: string;
  readonly provenance?: Provenance;
  readonly cases: readonly string[];
}

export interface BenchSuiteResult {
  readonly suite: string;
  readonly device: string;
  readonly date: string;
  readonly commit: string;
  /** Not every case of the suite yet (a run cut short or limited with `only`): resume it, or do not publish it. */
  readonly partial?: boolean;
  /** With a resumed run: each call's cases and provenance (the top-level date and provenance are the last call's). */
  readonly runs?: readonly BenchRunPart[];
  /** Machine and library versions of the run (torch server's hello). */
  readonly provenance?: Provenance;
  /** Where the inputs came from: the generator of the cases (each case's seed is in its params). */
  readonly inputs?: { readonly generator: string };
  readonly timing?: TimingPlan;
  readonly cases: readonly BenchCase[];
}

export type Metric = 'tflops' | 'gbps';

/** The figure a suite is compared on: TFLOP/s when every case has it, else GB/s. */
export function suiteMetric(result: BenchSuiteResult): Metric {
  return result.cases.filter(hasAnyFigure).every((c) => c.ours.tflops !== undefined) ? 'tflops' : 'gbps';
}

/** Whether our measurement of a case has a figure of merit; a case without one (dsa's decode step) is a time only. */
export function hasAnyFigure(c: BenchCase): boolean {
  return c.ours.tflops !== undefined || c.ours.gbps !== undefined;
}

/** The baseline of a case that ran in the least time, among those `accept` takes (default all); undefined when none ran. */
export function fastestBaseline(
  c: BenchCase,
  accept: (name: string) => boolean = () => true,
): { readonly name: string; readonly m: Measurement } | undefined {
  let best: { name: string; m: Measurement } | undefined;
  for (const [name, m] of Object.entries(c.baselines))
    if (accept(name) && !isBaselineError(m) && (best === undefined || m.ms < best.m.ms)) best = { name, m };
  return best;
}

/** A time in µs below a millisecond, else in ms. */
export function formatTime(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(2)} ms`;
}

export function isBaselineError(m: BaselineMeasurement): m is { readonly error: string } {
  return 'error' in m;
}

/** Checks a parsed JSON value against the result format; the error names the first field that is off. */
export function parseBenchResult(value: unknown): BenchSuiteResult {
  const root = expectObject(value, 'result');
  for (const key of ['suite', 'device', 'date', 'commit'] as const) expectString(root[key], `result.${key}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(root['date'] as string)) {
    throw new ArgumentError('result.date', 'must be YYYY-MM-DD', root['date']);
  }
  if (!Array.isArray(root['cases'])) throw new ArgumentError('result.cases', 'must be an array', root['cases']);
  root['cases'].forEach((raw: unknown, i: number) => {
    const where = `result.cases[${i}]`;
    const c = expectObject(raw, where);
    expectString(c['name'], `${where}.name`);
    expectObject(c['params'], `${where}.params`);
    const ours = expectObject(c['ours'], `${where}.ours`);
    expectMeasurement(ours, `${where}.ours`);
    expectString(ours['instance'], `${where}.ours.instance`);
    const baselines = expectObject(c['baselines'], `${where}.baselines`);
    for (const [name, b] of Object.entries(baselines)) {
      const m = expectObject(b, `${where}.baselines.${name}`);
      if ('error' in m) expectString(m['error'], `${where}.baselines.${name}.error`);
      else expectMeasurement(m, `${where}.baselines.${name}`);
    }
    if (typeof c['valid'] !== 'boolean') throw new ArgumentError(`${where}.valid`, 'must be a boolean', c['valid']);
  });
  return value as BenchSuiteResult;
}

function expectObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ArgumentError(where, 'must be an object', value);
  }
  return value as Record<string, unknown>;
}

function expectString(value: unknown, where: string): void {
  if (typeof value !== 'string' || value.length === 0) throw new ArgumentError(where, 'must be a non-empty string', value);
}

function expectMeasurement(m: Record<string, unknown>, where: string): void {
  for (const key of ['ms', 'tflops', 'gbps']) {
    const v = m[key];
    if (key !== 'ms' && v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new ArgumentError(`${where}.${key}`, 'must be a positive finite number', v);
    }
  }
}
