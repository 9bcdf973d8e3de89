// Which error sets a case's tolerance: the first torch baseline that ran and measured its errors,
// or, when none did, a model of rounding the reference once to the output's precision.
import { ArgumentError } from '@tilekit/numeric';
import type { ErrorStats, ReferenceStats } from '../referenceProtocol.ts';
import { unitRoundoff, type Precision } from './precision.ts';

/** A baseline as the reference server or a bench record holds it: it ran (with errors per output, maybe) or it failed. */
export type ErrorBaselineCandidate = { readonly errors?: Readonly<Record<string, ErrorStats>> } | { readonly error: string };

const isUsable = (errors: Readonly<Record<string, ErrorStats>>, outputs: readonly string[] | undefined): boolean => {
  const names = outputs ?? Object.keys(errors);
  return (
    names.length > 0 &&
    names.every((name) => {
      const s = errors[name];
      return s !== undefined && Number.isFinite(s.maxAbs) && Number.isFinite(s.rms);
    })
  );
};

/**
 * The first baseline in `preference` order that ran and has finite errors: for every name in
 * `outputs` when given, else at least one. Names missing from `baselines`, baselines that failed
 * (`{ error }`), measured no errors or produced NaN/Inf (a broken kernel sets no tolerance) are
 * skipped. undefined when none qualifies (see {@link roundingModelErrors}).
 * @throws ArgumentError naming `baselines` or `preference` when they are not a record / an array.
 */
export function pickErrorBaseline(
  baselines: Readonly<Record<string, ErrorBaselineCandidate>>,
  preference: readonly string[],
  outputs?: readonly string[],
): { readonly name: string; readonly errors: Readonly<Record<string, ErrorStats>> } | undefined {
  if (typeof baselines !== 'object' || baselines === null)
    throw new ArgumentError('baselines', 'must be a record of baselines by name', baselines);
  if (!Array.isArray(preference)) throw new ArgumentError('preference', 'must be an array of baseline names', preference);
  for (const name of preference) {
    if (!Object.hasOwn(baselines, name)) continue;
    const b = baselines[name]!;
    if ('error' in b || b.errors === undefined) continue;
    if (isUsable(b.errors, outputs)) return { name, errors: b.errors };
  }
  return undefined;
}

/**
 * The fallback when no torch baseline ran: per output, the error of rounding the reference once to
 * its precision (u = 2^−(p+1)): maxAbs = u·max|ref| (the worst case at the largest element) and
 * rms = u/√3·rms(ref) (relative rounding errors spread uniformly over [−u, u]); zeros for `exact`.
 * `precision` is one for every output or one per output (as SuiteCase.precision).
 * A model, not a measurement: a real low-precision kernel errs more (its products are rounded
 * before their sums), so limits built on it are tighter than limits built on torch's error.
 * @throws ArgumentError naming `reference` or `precision[.<output>]`.
 */
export function roundingModelErrors(
  reference: Readonly<Record<string, ReferenceStats>>,
  precision: Precision | Readonly<Record<string, Precision>>,
): Record<string, ErrorStats> {
  if (typeof reference !== 'object' || reference === null)
    throw new ArgumentError('reference', 'must be a record of ReferenceStats by output name', reference);
  const errors: Record<string, ErrorStats> = {};
  for (const [name, ref] of Object.entries(reference)) {
    const u =
      typeof precision === 'object' && precision !== null
        ? unitRoundoff(precision[name]!, `precision.${name}`)
        : unitRoundoff(precision, 'precision');
    errors[name] = { maxAbs: u * ref.maxAbs, rms: (u / Math.sqrt(3)) * ref.rms };
  }
  return errors;
}
