import { timeBackToBack, type Device, type DeviceBuffer, type Stream } from '@tilekit/runtime';
import { FLUSH_BYTES, SHORT_CASE_MS, type TimingPlan, type TimingStats } from '../referenceProtocol.ts';
import { timingSpread, timingStats } from './timingStats.ts';

/** Our side's timing of one case: the plain back-to-back timing and, for a short case, the one with the L2 flushed. */
export interface LaunchTiming extends TimingStats {
  readonly flushed?: TimingStats;
  /** Timings thrown away because their spread exceeded MAX_SPREAD. */
  readonly reruns: number;
}

/** docs/benchmarks.md: a case whose (max − min) / median exceeds this is timed again. */
export const MAX_SPREAD = 0.05;
/** How many times a noisy timing is repeated before it is recorded as noisy. */
export const MAX_RERUNS = 2;

/**
 * Times `launch` (enqueue only) as the protocol's TimingPlan says — the same scheme torch's side
 * uses — re-timing up to MAX_RERUNS times while the spread exceeds MAX_SPREAD (keeping the
 * tightest), and, when the median is below SHORT_CASE_MS (or the plan asks for it), again with a
 * FLUSH_BYTES write before every launch. `stream`: where `launch` enqueues (default: the legacy stream), so that
 * the events and the flushes go there too.
 */
export function measureLaunches(device: Device, launch: () => void, plan: TimingPlan, stream?: Stream): LaunchTiming {
  const on = stream === undefined ? {} : { stream };
  const { best: plain, reruns } = tightest(() => timingStats(timeBackToBack(device, launch, { ...plan, ...on })));
  if (!plan.flushL2 && plain.ms >= SHORT_CASE_MS) return { ...plain, reruns };
  let scratch: DeviceBuffer | undefined;
  try {
    scratch = device.alloc(FLUSH_BYTES, 'l2 flush');
    const flush = scratch;
    const flushed = tightest(() => timingStats(timeBackToBack(device, launch, { ...plan, ...on, flush }))).best;
    return { ...plain, flushed, reruns };
  } finally {
    device.synchronize();
    scratch?.dispose();
  }
}

function tightest(time: () => TimingStats): { best: TimingStats; reruns: number } {
  let best = time();
  let reruns = 0;
  while (timingSpread(best) > MAX_SPREAD && reruns < MAX_RERUNS) {
    const next = time();
    reruns++;
    if (timingSpread(next) < timingSpread(best)) best = next;
  }
  return { best, reruns };
}
