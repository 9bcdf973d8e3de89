// The plan of an FFPA problem: the path (sm_90a or sm_80), the CTAs that compute each query tile —
// one; a cluster of two that split Q·Kᵀ's head dim and O's columns; or column slices of O that each
// recompute S — and the instance of each.
import type { CheckedFmhaFwdProblem, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { FFPA_CATALOG } from './ffpaCatalog.ts';
import { FFPA_MAX_SLICE_COLUMNS, ffpaColumnSlices, type FfpaColumnSlice } from './ffpaColumnSlices.ts';
import { NoFfpaInstanceError, selectFfpaInstance } from './ffpaDispatch.ts';
import { ffpaClusterCtas, ffpaPathOf, type FfpaInstance, type FfpaPath } from './ffpaKernel.ts';
import { FFPA_SM80_CATALOG, FFPA_SM80_MAX_SLICE_COLUMNS, type FfpaSm80Instance } from './sm80/ffpaSm80Catalog.ts';

/** One column slice of O and its instance (a cluster instance's slice is all of O). */
export interface FfpaSlicePlan<I extends FfpaInstance = FfpaInstance> extends FfpaColumnSlice {
  readonly instance: I;
}

/** What runs a problem: the checked problem, its path, its slices in column order, and the plan in words. */
export interface FfpaPlan<I extends FfpaInstance = FfpaInstance> {
  readonly problem: CheckedFmhaFwdProblem;
  readonly path: FfpaPath;
  readonly slices: readonly FfpaSlicePlan<I>[];
  /** E.g. `d1024 dv1024: a cluster of 2 CTAs per 64 query rows, …` or `… 2 CTAs per 64 query rows, O columns [0,512) [512,1024), …`. */
  readonly description: string;
}

/**
 * How to plan: the path (default `sm90`), the catalog (default the path's: `FFPA_CATALOG` or
 * `FFPA_SM80_CATALOG`; only the path's instances in it are used); `clusters: false` keeps d_v above
 * 512 on column slices (sm_90a).
 */
export interface FfpaPlanOptions {
  readonly path?: FfpaPath;
  readonly catalog?: readonly FfpaInstance[];
  readonly clusters?: boolean;
}

/** Each path's default catalog and widest slice of O (columns one CTA computes). */
const PATHS: Readonly<Record<FfpaPath, { readonly catalog: readonly FfpaInstance[]; readonly maxColumns: number }>> = {
  sm90: { catalog: FFPA_CATALOG, maxColumns: FFPA_MAX_SLICE_COLUMNS },
  sm80: { catalog: FFPA_SM80_CATALOG, maxColumns: FFPA_SM80_MAX_SLICE_COLUMNS },
};

/**
 * The launch problem of one slice: `p` with hdimV = the slice's width (V and O keep their strides;
 * the launcher offsets their addresses by the slice's first column) and LSE written by the first
 * slice only (every slice computes the same row statistics).
 */
export function ffpaSliceProblem<P extends FmhaFwdLaunchProblem>(p: P, slice: FfpaColumnSlice): P {
  return { ...p, hdimV: slice.width, lse: p.lse && slice.offset === 0 };
}

function describe(p: FmhaFwdLaunchProblem, path: FfpaPath, slices: readonly FfpaSlicePlan[]): string {
  const head = `d${p.hdimQ} dv${p.hdimV}${path === 'sm80' ? ' (sm_80 path)' : ''}`;
  const ctas = ffpaClusterCtas(slices[0]!.instance);
  if (ctas > 1)
    return (
      `${head}: a cluster of ${ctas} CTAs per 64 query rows, each Q·Kᵀ over ${p.hdimQ / ctas} columns of d (partial S ` +
      `exchanged through distributed shared memory) and ${p.hdimV / ctas} columns of O`
    );
  if (slices.length === 1) return `${head}: 1 CTA per 64 query rows`;
  const cols = slices.map((s) => `[${s.offset},${s.offset + s.width})`).join(' ');
  return `${head}: ${slices.length} CTAs per 64 query rows, O columns ${cols}, S recomputed in each`;
}

/** Options that name the sm_90a path (or no path): its plans hold sm_90a instances. */
export type FfpaSm90PlanOptions = FfpaPlanOptions & { readonly path?: 'sm90' };
/** Options that name the sm_80 path: its plans hold sm_80 instances. */
export type FfpaSm80PlanOptions = FfpaPlanOptions & { readonly path: 'sm80' };

/**
 * The slices of `p` and their instances on the options' path: all of O in one slice when an
 * instance computes it (one CTA, or — unless `clusters` is false — a cluster), else
 * `ffpaColumnSlices` of the path's widest slice. Throws `NoFfpaInstanceError` when a slice has no
 * instance.
 */
export function ffpaSlicePlans(p: CheckedFmhaFwdProblem, options?: FfpaSm90PlanOptions): readonly FfpaSlicePlan<FmhaFwdInstance>[];
export function ffpaSlicePlans(p: CheckedFmhaFwdProblem, options: FfpaSm80PlanOptions): readonly FfpaSlicePlan<FfpaSm80Instance>[];
export function ffpaSlicePlans(p: CheckedFmhaFwdProblem, options?: FfpaPlanOptions): readonly FfpaSlicePlan[];
export function ffpaSlicePlans(p: CheckedFmhaFwdProblem, options: FfpaPlanOptions = {}): readonly FfpaSlicePlan[] {
  const path = options.path ?? 'sm90';
  const { catalog, maxColumns } = PATHS[path];
  const usable = (options.catalog ?? catalog).filter(
    (i) => ffpaPathOf(i) === path && (options.clusters !== false || ffpaClusterCtas(i) === 1),
  );
  const pick = (s: FfpaColumnSlice): FfpaSlicePlan => Object.freeze({ ...s, instance: selectFfpaInstance(ffpaSliceProblem(p, s), usable) });
  const whole = { offset: 0, width: p.hdimV };
  if (p.hdimV <= maxColumns) return Object.freeze([pick(whole)]);
  try {
    return Object.freeze([pick(whole)]);
  } catch (e) {
    if (!(e instanceof NoFfpaInstanceError)) throw e;
  }
  return Object.freeze(ffpaColumnSlices(p.hdimV, maxColumns).map(pick));
}

/**
 * Plans `problem` (no GPU needed): checks it (`checkFfpaProblem`; a checked problem is taken as
 * is) and picks its slices (`ffpaSlicePlans`). Throws `FmhaFwdArgumentError` for a bad problem and
 * `NoFfpaInstanceError` when a slice has no instance (a custom catalog).
 */
export function planFfpa(problem: FfpaProblem | CheckedFmhaFwdProblem, options?: FfpaSm90PlanOptions): FfpaPlan<FmhaFwdInstance>;
export function planFfpa(problem: FfpaProblem | CheckedFmhaFwdProblem, options: FfpaSm80PlanOptions): FfpaPlan<FfpaSm80Instance>;
export function planFfpa(problem: FfpaProblem | CheckedFmhaFwdProblem, options?: FfpaPlanOptions): FfpaPlan;
export function planFfpa(problem: FfpaProblem | CheckedFmhaFwdProblem, options: FfpaPlanOptions = {}): FfpaPlan {
  const checked = typeof problem === 'object' && problem !== null && 'rowsQ' in problem ? problem : checkFfpaProblem(problem);
  const slices = ffpaSlicePlans(checked, options);
  const path = options.path ?? 'sm90';
  return Object.freeze({ problem: checked, path, slices, description: describe(checked, path, slices) });
}
