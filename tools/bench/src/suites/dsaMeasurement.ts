// The dsa suite's record of our timing: the back-to-back statistics, the instance(s) timed and, where a FLOP count
// applies (the sparse MLA calls, not a whole step), TFLOP/s.
import type { OurMeasurement } from '../benchResult.ts';
import type { LaunchTiming } from '../timing/measureLaunches.ts';

/** Our timing as the record's measurement, with TFLOP/s of `flops` when given. */
export function dsaMeasurement(t: LaunchTiming, instance: string, flops?: number): OurMeasurement {
  const { ms, msMin, msMax, reps, launchesPerRep, reruns } = t;
  const flushed = t.flushed === undefined ? {} : { flushed: t.flushed };
  const figure = flops === undefined ? {} : { tflops: flops / ms / 1e9 };
  return { ms, msMin, msMax, reps, launchesPerRep, reruns, ...flushed, ...figure, instance };
}
