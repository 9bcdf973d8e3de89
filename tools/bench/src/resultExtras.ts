// Readers of the optional fields a bench result may carry beyond the checked format of
// benchResult.ts (issue 16: repetitions, validity of a baseline, provenance, the input generator).
// Each reads the value as `unknown` and returns it only when it has the expected type, so a result
// written before these fields existed (or with one of them malformed) reads as "not recorded".
import type { BaselineMeasurement, BenchCase, BenchSuiteResult, Measurement } from './benchResult.ts';

/** The fastest and slowest of a measurement's repetitions (ms), when recorded. */
export interface MsSpread {
  readonly min: number;
  readonly max: number;
}

/** Where and with what a suite was measured, as far as the result records it. */
export interface ResultProvenance {
  readonly torch?: string;
  readonly cuda?: string;
  readonly cudnn?: string;
  readonly driver?: string;
  readonly smClockMHz?: number;
  readonly smClockMaxMHz?: number;
  readonly powerLimitW?: number;
}

/** The input generator both sides ran on, as far as the result records it. */
export interface ResultInputs {
  readonly generator?: string;
  readonly seed?: string;
}

function fieldsOf(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** A version or name: a non-empty string, or a number written as given (cuDNN reports 90100). */
function label(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** `msMin` / `msMax` of a measurement when both are positive numbers with min ≤ max. */
export function msSpreadOf(m: Measurement | BaselineMeasurement): MsSpread | undefined {
  const fields = fieldsOf(m);
  const min = positiveNumber(fields['msMin']);
  const max = positiveNumber(fields['msMax']);
  return min !== undefined && max !== undefined && min <= max ? { min, max } : undefined;
}

/** False only when a baseline says it failed validation (`valid: false`); absent counts as not checked. */
export function baselineMarkedInvalid(m: BaselineMeasurement): boolean {
  return fieldsOf(m)['valid'] === false;
}

/** Whether the harness flagged a case's timing as noisy (`noisy: true`: its spread stayed above 5% after re-runs). */
export function caseMarkedNoisy(c: BenchCase): boolean {
  return fieldsOf(c)['noisy'] === true;
}

/** The result's `provenance` fields that are present and well-typed. */
export function provenanceOf(result: BenchSuiteResult): ResultProvenance {
  const p = fieldsOf(fieldsOf(result)['provenance']);
  const entries: [keyof ResultProvenance, string | number | undefined][] = [
    ['torch', label(p['torch'])],
    ['cuda', label(p['cuda'])],
    ['cudnn', label(p['cudnn'])],
    ['driver', label(p['driver'])],
    ['smClockMHz', positiveNumber(p['smClockMHz'])],
    ['smClockMaxMHz', positiveNumber(p['smClockMaxMHz'])],
    ['powerLimitW', positiveNumber(p['powerLimitW'])],
  ];
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined)) as ResultProvenance;
}

/** The result's `inputs` fields that are present and well-typed. */
export function inputsOf(result: BenchSuiteResult): ResultInputs {
  const i = fieldsOf(fieldsOf(result)['inputs']);
  const generator = label(i['generator']);
  const seed = label(i['seed']);
  return { ...(generator === undefined ? {} : { generator }), ...(seed === undefined ? {} : { seed }) };
}
