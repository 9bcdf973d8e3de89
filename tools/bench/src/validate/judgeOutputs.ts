// The verdict on one benchmark case from error statistics alone: our error against the fp32
// reference must stay within twice the error of torch's own low-precision kernel against the same
// reference, plus a floor of a quarter of the precision's ulp (relative to the reference's size).
import { ArgumentError } from '@tilekit/numeric';
import type { ErrorStats, ReferenceStats } from '../referenceProtocol.ts';
import { unitRoundoff, type Precision } from './precision.ts';

export type { Precision } from './precision.ts';

/** What one output is judged on: our error, torch's error (same reference), the reference's size and the precision. */
export interface OutputEvidence {
  readonly ours: ErrorStats;
  readonly torch: ErrorStats;
  readonly reference: ReferenceStats;
  readonly precision: Precision;
}

/** The verdict on one output: the limit our error had to stay within, and why it failed (or "within the limit"). */
export interface OutputVerdict {
  readonly ok: boolean;
  readonly limit: ErrorStats;
  readonly reason: string;
}

/** The verdict on a case: valid when every output (at least one) is ok; one summary line per output. */
export interface CaseVerdict {
  readonly valid: boolean;
  readonly outputs: Readonly<Record<string, OutputEvidence & OutputVerdict>>;
  readonly summary: string;
}

/** Our error may be this many times torch's. */
export const TORCH_ERROR_FACTOR = 2;

/**
 * The absolute floor of the limit relative to the reference's size: half the unit roundoff,
 * 2^−(p+2) (fp16 2^−12, bf16 2^−9, fp32 2^−25); 0 for `exact`.
 * @throws ArgumentError naming `argument` for an unknown precision.
 */
export function errorFloor(precision: Precision, argument = 'precision'): number {
  return unitRoundoff(precision, argument) / 2;
}

const STATS = ['maxAbs', 'rms'] as const;

function checkStats(where: string, stats: unknown): asserts stats is ErrorStats {
  if (typeof stats !== 'object' || stats === null) throw new ArgumentError(where, 'must be { maxAbs, rms }', stats);
  for (const key of STATS) {
    const v = (stats as Record<string, unknown>)[key];
    if (typeof v !== 'number' || v < 0)
      throw new ArgumentError(`${where}.${key}`, 'must be a number ≥ 0 (NaN and Infinity mean not finite)', v);
  }
}

const isFiniteStats = (s: ErrorStats): boolean => Number.isFinite(s.maxAbs) && Number.isFinite(s.rms);

/** A statistic for a summary: 3 significant digits. */
export const formatStat = (x: number): string => (x === 0 || !Number.isFinite(x) ? String(x) : x.toExponential(2));

/**
 * Judges one output: limit = 2·torch + 2^−(p+2)·reference for each statistic (maxAbs, rms), or 0
 * for `exact`; ok iff our maxAbs and rms are both within it and finite. A non-finite limit (torch's
 * error or the reference not finite) judges nothing and fails.
 * @throws ArgumentError naming `argument`'s field when a statistic is not a number ≥ 0 or the precision is unknown.
 */
export function judgeOutput(e: OutputEvidence, argument = 'evidence'): OutputVerdict {
  if (typeof e !== 'object' || e === null) throw new ArgumentError(argument, 'must be { ours, torch, reference, precision }', e);
  checkStats(`${argument}.ours`, e.ours);
  checkStats(`${argument}.torch`, e.torch);
  checkStats(`${argument}.reference`, e.reference);
  const floor = errorFloor(e.precision, `${argument}.precision`);
  const limit: ErrorStats =
    e.precision === 'exact'
      ? { maxAbs: 0, rms: 0 }
      : {
          maxAbs: TORCH_ERROR_FACTOR * e.torch.maxAbs + floor * e.reference.maxAbs,
          rms: TORCH_ERROR_FACTOR * e.torch.rms + floor * e.reference.rms,
        };
  if (!isFiniteStats(e.ours)) return { ok: false, limit, reason: 'our output is not finite (NaN or Inf)' };
  if (!isFiniteStats(limit)) return { ok: false, limit, reason: "no finite limit: torch's error or the reference is not finite" };
  const over = STATS.filter((key) => !(e.ours[key] <= limit[key]));
  if (over.length === 0) return { ok: true, limit, reason: 'within the limit' };
  return { ok: false, limit, reason: over.map((key) => `${key} ${formatStat(e.ours[key])} > limit ${formatStat(limit[key])}`).join('; ') };
}

/**
 * Judges every output of a case ({@link judgeOutput}); valid when there is at least one output and
 * each is ok. The summary has one line per output: `name ok|FAIL maxAbs ours/limit, rms ours/limit (precision)`.
 * @throws ArgumentError naming `evidence.<output>…` (see judgeOutput).
 */
export function judgeOutputs(evidence: Readonly<Record<string, OutputEvidence>>): CaseVerdict {
  if (typeof evidence !== 'object' || evidence === null)
    throw new ArgumentError('evidence', 'must be a record of OutputEvidence by output name', evidence);
  const outputs: Record<string, OutputEvidence & OutputVerdict> = {};
  const lines: string[] = [];
  for (const [name, e] of Object.entries(evidence)) {
    const verdict = judgeOutput(e, `evidence.${name}`);
    outputs[name] = { ...e, ...verdict };
    const stat = (key: (typeof STATS)[number]): string => `${key} ${formatStat(e.ours[key])}/${formatStat(verdict.limit[key])}`;
    lines.push(`${name} ${verdict.ok ? 'ok' : 'FAIL'} ${stat('maxAbs')}, ${stat('rms')} (${e.precision})`);
  }
  const names = Object.keys(outputs);
  return {
    valid: names.length > 0 && names.every((name) => outputs[name]!.ok),
    outputs,
    summary: names.length === 0 ? 'no outputs to judge' : lines.join('\n'),
  };
}
