import type { BackToBackTimes } from '@tilekit/runtime';
import type { TimingStats } from '../referenceProtocol.ts';

/** Median, min and max of the repetitions' per-launch times. */
export function timingStats(times: BackToBackTimes): TimingStats {
  const sorted = [...times.reps].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const ms = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { ms, msMin: sorted[0]!, msMax: sorted[sorted.length - 1]!, reps: times.reps, launchesPerRep: times.launchesPerRep };
}

/** (max − min) / median of a timing: the spread docs/benchmarks.md bounds at 5%. */
export function timingSpread(t: TimingStats): number {
  return t.ms > 0 ? (t.msMax - t.msMin) / t.ms : 0;
}
