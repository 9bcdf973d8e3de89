// What a Sparge case records for our side: the headline (block map + sparse attention, what a user
// pays), attention alone and our dense forward as own baselines, all dense-equivalent TFLOP/s.
import type { Measurement, OurMeasurement } from '../benchResult.ts';
import { tflopsOf } from '../flops.ts';
import type { TimingStats } from '../referenceProtocol.ts';

/** A timing as measureLaunches gives it (the re-run count is not recorded). */
export interface SpargeTiming extends TimingStats {
  readonly flushed?: TimingStats;
}

/** Our three timings of a case. */
export interface SpargeTimings {
  /** Block map + sparse attention, enqueued together. */
  readonly headline: SpargeTiming;
  /** The sparse attention alone, on the map the headline's last block-map launch wrote. */
  readonly attention: SpargeTiming;
  /** Our dense forward (FmhaFwd) on the same inputs. */
  readonly dense: SpargeTiming;
}

/** The headline plus the figures of the sparse side: attention-only and dense ms, speedups over our dense forward, map density, P·V counts. */
export interface SpargeOurMeasurement extends OurMeasurement {
  readonly attentionMs: number;
  readonly denseMs: number;
  readonly denseInstance: string;
  /** denseMs / ms (the headline). */
  readonly speedupVsDense: number;
  /** denseMs / attentionMs. */
  readonly attentionSpeedupVsDense: number;
  /** Visited blocks / blocks dense attention visits, of the map sent to the check; achievedSparsity = 1 − density. */
  readonly density: number;
  readonly achievedSparsity: number;
  /** P·V tiles computed and skipped in one launch (warpgroup granularity). */
  readonly pvComputed: number;
  readonly pvSkipped: number;
}

/** A timing as a Measurement: its TimingStats fields (and the flushed timing, if any) with dense-equivalent TFLOP/s of the median. */
export function spargeMeasurementOf(t: SpargeTiming, flops: number): Measurement {
  const { ms, msMin, msMax, reps, launchesPerRep } = t;
  return {
    ms,
    msMin,
    msMax,
    reps,
    launchesPerRep,
    tflops: tflopsOf(flops, ms),
    ...(t.flushed === undefined ? {} : { flushed: t.flushed }),
  };
}

/** Our measurement of a case from its timings (all medians > 0). */
export function spargeOurMeasurement(
  flops: number,
  t: SpargeTimings,
  extra: { instance: string; denseInstance: string; density: number; pvComputed: number; pvSkipped: number },
): SpargeOurMeasurement {
  return {
    ...spargeMeasurementOf(t.headline, flops),
    instance: extra.instance,
    attentionMs: t.attention.ms,
    denseMs: t.dense.ms,
    denseInstance: extra.denseInstance,
    speedupVsDense: t.dense.ms / t.headline.ms,
    attentionSpeedupVsDense: t.dense.ms / t.attention.ms,
    density: extra.density,
    achievedSparsity: 1 - extra.density,
    pvComputed: extra.pvComputed,
    pvSkipped: extra.pvSkipped,
  };
}

/** Our own baselines of a case: the attention alone (the second column) and our dense forward. */
export function spargeOwnBaselines(flops: number, t: SpargeTimings): Record<'ours-attention-only' | 'ours-dense', Measurement> {
  return { 'ours-attention-only': spargeMeasurementOf(t.attention, flops), 'ours-dense': spargeMeasurementOf(t.dense, flops) };
}
