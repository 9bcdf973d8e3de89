import { ArgumentError } from '@tilekit/numeric';

/**
 * One suite's results, in the format of docs/benchmarks.md: our kernel and each reference
 * measured in the same device command, every case validated. `gbps` is added for memory-bound suites
 * (copies, permutes) where bandwidth, not FLOPs, is the figure of merit.
 */
export interface Measurement {
  readonly ms: number;
  readonly tflops?: number;
  readonly gbps?: number;
}

export interface OurMeasurement extends Measurement {
  readonly instance: string;
}

/** A reference that could not run a case keeps its error string instead of being dropped. */
export type BaselineMeasurement = Measurement | { readonly error: string };

export interface BenchCase {
  readonly name: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly ours: OurMeasurement;
  readonly baselines: Readonly<Record<string, BaselineMeasurement>>;
  readonly valid: boolean;
  readonly maxAbsErr?: number;
  readonly note?: string;
}

export interface BenchSuiteResult {
  readonly suite: string;
  readonly device: string;
  readonly date: string;
  readonly commit: string;
  readonly cases: readonly BenchCase[];
}

export type Metric = 'tflops' | 'gbps';

/** The figure a suite is compared on: TFLOP/s when every case has it, else GB/s. */
export function suiteMetric(result: BenchSuiteResult): Metric {
  return result.cases.every((c) => c.ours.tflops !== undefined) ? 'tflops' : 'gbps';
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
