// The `sparge` check's options (REFERENCE_OPS.md): what our attention kernel does, for the reference
// of the same sparse computation (kernels/sparge/src/spargeReference.ts's PV-skip model).
import type { SpargePlan } from '@tilekit/kernel-sparge';

/** Rows per vote in `warp` mode: one warp's 16 rows of the wgmma tile (FmhaFwdPvSkipArgs, mode 1). */
export const SPARGE_WARP_ROWS = 16;
/** The last visited key tile always computes P·V (the pipeline votes on every tile but the last; upstream sm90). */
export const SPARGE_ALWAYS_COMPUTED_TAIL = 1;
/** A group that votes skip zeroes its P and adds nothing to l (upstream's code, not the paper's Algorithm 1). */
export const SPARGE_SKIPPED_MASS_IN_DENOMINATOR = false;

/** The check options of a Sparge run. */
export type SpargeCheckOptions = {
  /** Top-left causal mask inside the visited blocks (= bottom-right: sq = sk). */
  readonly causal: boolean;
  /** The softmax scale the kernel received (fp32). */
  readonly scale: number;
  readonly pv_mode: 'none' | 'warp' | 'block';
  /** Per query head (log2 units), as the kernel's fp32 array; +∞ (never skip) is sent as Number.MAX_VALUE (JSON has no ∞; equivalent in the model). */
  readonly pv_threshold: readonly number[];
  readonly warp_rows: number;
  readonly always_computed_tail: number;
  readonly skipped_mass_in_denominator: boolean;
};

/** The per-head PV thresholds as the kernel reads them (uploaded as fp32), JSON-safe. */
export function spargeKernelPvThresholds(thresholds: readonly number[]): number[] {
  return thresholds.map((t) => (t === Infinity ? Number.MAX_VALUE : Math.fround(t)));
}

/** The check options of a planned run (scale, causality, PV mode and thresholds from the plan; vote constants of the kernel). */
export function spargeCheckOptions(plan: SpargePlan): SpargeCheckOptions {
  return {
    causal: plan.params.isCausal,
    scale: plan.attention.scale,
    pv_mode: plan.attention.pvMode,
    pv_threshold: spargeKernelPvThresholds(plan.params.pvThreshold),
    warp_rows: SPARGE_WARP_ROWS,
    always_computed_tail: SPARGE_ALWAYS_COMPUTED_TAIL,
    skipped_mass_in_denominator: SPARGE_SKIPPED_MASS_IN_DENOMINATOR,
  };
}
