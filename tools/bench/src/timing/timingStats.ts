import { summarizeTimes } from '@tilekit/host';
import type { BackToBackTimes } from '@tilekit/runtime';
import type { TimingStats } from '../referenceProtocol.ts';

/** Median, min and max of the repetitions' per-launch times. */
export function timingStats(times: BackToBackTimes): TimingStats {
  const { median, min, max } = summarizeTimes(times.reps);
  return { ms: median, msMin: min, msMax: max, reps: times.reps, launchesPerRep: times.launchesPerRep };
}

/** (max − min) / median of a timing: the spread docs/benchmarks.md bounds at 5%. */
export function timingSpread(t: Pick<TimingStats, 'ms' | 'msMin' | 'msMax'>): number {
  return t.ms > 0 ? (t.msMax - t.msMin) / t.ms : 0;
}
