import { ArgumentError } from '@tilekit/numeric';
import { CudaEvent } from './cudaEvent.ts';
import type { Device } from './device.ts';
import type { Stream } from './stream.ts';

export interface TimeLaunchesOptions {
  /** Launches run first and not timed (clocks, caches, lazy module loading). */
  readonly warmup: number;
  /** Timed launches, each between its own pair of event records. */
  readonly repeat: number;
  /** Where the events are recorded: the stream `launch` enqueues on (default: the default stream). */
  readonly stream?: Stream;
}

/**
 * The GPU time of `repeat` launches, one CUDA-event pair around each, after `warmup` untimed
 * ones — the measurement docs/benchmarks.md prescribes. `launch` must only enqueue
 * (validate before, so host work is not timed). Returns milliseconds in launch order.
 */
export function timeLaunches(device: Device, launch: () => void, options: TimeLaunchesOptions): number[] {
  for (const key of ['warmup', 'repeat'] as const) {
    if (!Number.isSafeInteger(options[key]) || options[key] < 0)
      throw new ArgumentError(key, 'must be a non-negative integer', options[key]);
  }
  for (let i = 0; i < options.warmup; i++) launch();
  const start = device.createEvent();
  const stop = device.createEvent();
  try {
    const times: number[] = [];
    for (let i = 0; i < options.repeat; i++) {
      start.record(options.stream);
      launch();
      stop.record(options.stream);
      times.push(CudaEvent.elapsedMs(start, stop));
    }
    return times;
  } finally {
    start.dispose();
    stop.dispose();
  }
}
