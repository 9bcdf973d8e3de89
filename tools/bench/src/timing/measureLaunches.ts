import { timeBackToBack, type Device, type DeviceBuffer } from '@tilekit/runtime';
import { FLUSH_BYTES, SHORT_CASE_MS, type TimingPlan, type TimingStats } from '../referenceProtocol.ts';
import { timingStats } from './timingStats.ts';

/** Our side's timing of one case: the plain back-to-back timing and, for a short case, the one with the L2 flushed. */
export interface LaunchTiming extends TimingStats {
  readonly flushed?: TimingStats;
}

/**
 * Times `launch` (enqueue only) as the protocol's TimingPlan says — the same scheme torch's side
 * uses — and, when the median is below SHORT_CASE_MS (or the plan asks for it), again with a
 * FLUSH_BYTES write before every launch.
 */
export function measureLaunches(device: Device, launch: () => void, plan: TimingPlan): LaunchTiming {
  const plain = timingStats(timeBackToBack(device, launch, plan));
  if (!plan.flushL2 && plain.ms >= SHORT_CASE_MS) return plain;
  let scratch: DeviceBuffer | undefined;
  try {
    scratch = device.alloc(FLUSH_BYTES, 'l2 flush');
    return { ...plain, flushed: timingStats(timeBackToBack(device, launch, { ...plan, flush: scratch })) };
  } finally {
    device.synchronize();
    scratch?.dispose();
  }
}
