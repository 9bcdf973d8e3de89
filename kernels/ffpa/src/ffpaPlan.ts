// The plan of an FFPA problem: its column slices of O and the instance that computes each.
import type { CheckedFmhaFwdProblem, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { ffpaColumnSlices, type FfpaColumnSlice } from './ffpaColumnSlices.ts';
import { selectFfpaInstance } from './ffpaDispatch.ts';

/** One column slice of O and its instance. */
export interface FfpaSlicePlan extends FfpaColumnSlice {
  readonly instance: FmhaFwdInstance;
}

/** What runs a problem: the checked problem, its slices in column order, and the plan in words. */
export interface FfpaPlan {
  readonly problem: CheckedFmhaFwdProblem;
  readonly slices: readonly FfpaSlicePlan[];
  /** E.g. `d1024 dv1024: 2 CTAs per 64 query rows, O columns [0,512) [512,1024), S recomputed in each`. */
  readonly description: string;
}

/**
 * The launch problem of one slice: `p` with hdimV = the slice's width (V and O keep their strides;
 * the launcher offsets their addresses by the slice's first column) and LSE written by the first
 * slice only (every slice computes the same row statistics).
 */
export function ffpaSliceProblem<P extends FmhaFwdLaunchProblem>(p: P, slice: FfpaColumnSlice): P {
  return { ...p, hdimV: slice.width, lse: p.lse && slice.offset === 0 };
}

function describe(p: FmhaFwdLaunchProblem, slices: readonly FfpaColumnSlice[]): string {
  const cols = slices.map((s) => `[${s.offset},${s.offset + s.width})`).join(' ');
  const ctas = slices.length === 1 ? '1 CTA per 64 query rows' : `${slices.length} CTAs per 64 query rows`;
  return `d${p.hdimQ} dv${p.hdimV}: ${ctas}, O columns ${cols}${slices.length > 1 ? ', S recomputed in each' : ''}`;
}

/**
 * Plans `problem` (no GPU needed): checks it (`checkFfpaProblem`; a checked problem is taken as
 * is), splits O into column slices (`ffpaColumnSlices`) and dispatches each slice's instance from
 * `options.catalog` (default `FFPA_CATALOG`). Throws `FmhaFwdArgumentError` for a bad problem and
 * `NoFfpaInstanceError` when a slice has no instance (a custom catalog).
 */
export function planFfpa(
  problem: FfpaProblem | CheckedFmhaFwdProblem,
  options: { readonly catalog?: readonly FmhaFwdInstance[] } = {},
): FfpaPlan {
  const checked = typeof problem === 'object' && problem !== null && 'rowsQ' in problem ? problem : checkFfpaProblem(problem);
  const columns = ffpaColumnSlices(checked.hdimV);
  const slices = columns.map((s) => Object.freeze({ ...s, instance: selectFfpaInstance(ffpaSliceProblem(checked, s), options.catalog) }));
  return Object.freeze({ problem: checked, slices: Object.freeze(slices), description: describe(checked, columns) });
}
