// The plan of an FFPA problem: the CTAs that compute each query tile — one; a cluster of two that
// split Q·Kᵀ's head dim and O's columns; or column slices of O that each recompute S — and the
// instance of each.
import type { CheckedFmhaFwdProblem, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { FFPA_CATALOG } from './ffpaCatalog.ts';
import { ffpaColumnSlices, type FfpaColumnSlice } from './ffpaColumnSlices.ts';
import { NoFfpaInstanceError, selectFfpaInstance } from './ffpaDispatch.ts';

/** One column slice of O and its instance (a cluster instance's slice is all of O). */
export interface FfpaSlicePlan extends FfpaColumnSlice {
  readonly instance: FmhaFwdInstance;
}

/** What runs a problem: the checked problem, its slices in column order, and the plan in words. */
export interface FfpaPlan {
  readonly problem: CheckedFmhaFwdProblem;
  readonly slices: readonly FfpaSlicePlan[];
  /** E.g. `d1024 dv1024: a cluster of 2 CTAs per 64 query rows, …` or `… 2 CTAs per 64 query rows, O columns [0,512) [512,1024), …`. */
  readonly description: string;
}

/** How to plan: the catalog (default `FFPA_CATALOG`); `clusters: false` keeps d_v above 512 on column slices. */
export interface FfpaPlanOptions {
  readonly catalog?: readonly FmhaFwdInstance[];
  readonly clusters?: boolean;
}

/**
 * The launch problem of one slice: `p` with hdimV = the slice's width (V and O keep their strides;
 * the launcher offsets their addresses by the slice's first column) and LSE written by the first
 * slice only (every slice computes the same row statistics).
 */
export function ffpaSliceProblem<P extends FmhaFwdLaunchProblem>(p: P, slice: FfpaColumnSlice): P {
  return { ...p, hdimV: slice.width, lse: p.lse && slice.offset === 0 };
}

function describe(p: FmhaFwdLaunchProblem, slices: readonly FfpaSlicePlan[]): string {
  const head = `d${p.hdimQ} dv${p.hdimV}`;
  const ctas = slices[0]!.instance.clusterCtas;
  if (ctas > 1)
    return (
      `${head}: a cluster of ${ctas} CTAs per 64 query rows, each Q·Kᵀ over ${p.hdimQ / ctas} columns of d (partial S ` +
      `exchanged through distributed shared memory) and ${p.hdimV / ctas} columns of O`
    );
  if (slices.length === 1) return `${head}: 1 CTA per 64 query rows`;
  const cols = slices.map((s) => `[${s.offset},${s.offset + s.width})`).join(' ');
  return `${head}: ${slices.length} CTAs per 64 query rows, O columns ${cols}, S recomputed in each`;
}

/**
 * The slices of `p` and their instances: all of O in one slice when an instance computes it (one
 * CTA, or — unless `clusters` is false — a cluster), else `ffpaColumnSlices`. Throws
 * `NoFfpaInstanceError` when a slice has no instance.
 */
export function ffpaSlicePlans(p: CheckedFmhaFwdProblem, options: FfpaPlanOptions = {}): readonly FfpaSlicePlan[] {
  const catalog = options.catalog ?? FFPA_CATALOG;
  const usable = options.clusters === false ? catalog.filter((i) => i.clusterCtas === 1) : catalog;
  const pick = (s: FfpaColumnSlice): FfpaSlicePlan => Object.freeze({ ...s, instance: selectFfpaInstance(ffpaSliceProblem(p, s), usable) });
  const whole = { offset: 0, width: p.hdimV };
  if (p.hdimV <= 512) return Object.freeze([pick(whole)]);
  try {
    return Object.freeze([pick(whole)]);
  } catch (e) {
    if (!(e instanceof NoFfpaInstanceError)) throw e;
  }
  return Object.freeze(ffpaColumnSlices(p.hdimV).map(pick));
}

/**
 * Plans `problem` (no GPU needed): checks it (`checkFfpaProblem`; a checked problem is taken as
 * is) and picks its slices (`ffpaSlicePlans`). Throws `FmhaFwdArgumentError` for a bad problem and
 * `NoFfpaInstanceError` when a slice has no instance (a custom catalog).
 */
export function planFfpa(problem: FfpaProblem | CheckedFmhaFwdProblem, options: FfpaPlanOptions = {}): FfpaPlan {
  const checked = typeof problem === 'object' && problem !== null && 'rowsQ' in problem ? problem : checkFfpaProblem(problem);
  const slices = ffpaSlicePlans(checked, options);
  return Object.freeze({ problem: checked, slices, description: describe(checked, slices) });
}
