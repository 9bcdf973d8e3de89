import { ArgumentError } from '@tilekit/numeric';
import { CudaEvent } from './cudaEvent.ts';
import type { Device } from './device.ts';
import type { DeviceBuffer } from './deviceBuffer.ts';
import type { Stream } from './stream.ts';

export interface TimeBackToBackOptions {
  /** Untimed calls first (clocks, caches, lazy module loading). */
  readonly warmup: number;
  /** Independent repetitions; each is one timed batch of back-to-back launches. */
  readonly repetitions: number;
  /** GPU time of untimed launches after the calibration (clocks up from idle); default 0. */
  readonly warmupMs?: number;
  /** A repetition should last about this long: sets the launches per repetition from one calibration call. */
  readonly targetMs: number;
  readonly minLaunches: number;
  readonly maxLaunches: number;
  /**
   * When given, every launch is preceded by a write over this whole buffer (flushing the L2), and
   * the same number of writes alone is timed and subtracted.
   */
  readonly flush?: DeviceBuffer;
  /** The stream `launch` enqueues on (default: the default stream). */
  readonly stream?: Stream;
}

/** Per-launch milliseconds of each repetition, and how many launches each repetition timed. */
export interface BackToBackTimes {
  readonly reps: readonly number[];
  readonly launchesPerRep: number;
}

/**
 * Times `launch` without host launch overhead: after `warmup` calls, one calibration call (t) and
 * ⌈warmupMs / t⌉ more untimed ones, each repetition enqueues launchesPerRep = clamp(⌈targetMs / t⌉, minLaunches, maxLaunches) launches back to
 * back between two events and divides their elapsed time by launchesPerRep (docs/benchmarks.md). `launch`
 * must only enqueue.
 */
export function timeBackToBack(device: Device, launch: () => void, options: TimeBackToBackOptions): BackToBackTimes {
  checkOptions(options);
  const step = options.flush === undefined ? launch : withFlush(options.flush, launch, options.stream);
  for (let i = 0; i < options.warmup; i++) step();
  const start = device.createEvent();
  const stop = device.createEvent();
  try {
    const batch = (count: number, body: () => void): number => {
      start.record(options.stream);
      for (let i = 0; i < count; i++) body();
      stop.record(options.stream);
      return CudaEvent.elapsedMs(start, stop);
    };
    const once = Math.max(batch(1, step), 1e-4);
    const launchesPerRep = Math.min(options.maxLaunches, Math.max(options.minLaunches, Math.ceil(options.targetMs / once)));
    batch(Math.min(options.maxLaunches, Math.ceil((options.warmupMs ?? 0) / once)), step);
    const flushOnly = options.flush === undefined ? undefined : withFlush(options.flush, () => {}, options.stream);
    const reps = Array.from({ length: options.repetitions }, () => {
      const total = batch(launchesPerRep, step) - (flushOnly === undefined ? 0 : batch(launchesPerRep, flushOnly));
      return Math.max(total, 0) / launchesPerRep;
    });
    return { reps, launchesPerRep };
  } finally {
    start.dispose();
    stop.dispose();
  }
}

function withFlush(buffer: DeviceBuffer, launch: () => void, stream: Stream | undefined): () => void {
  return () => {
    buffer.fill(0, stream === undefined ? {} : { stream });
    launch();
  };
}

function checkOptions(options: TimeBackToBackOptions): void {
  for (const key of ['warmup', 'repetitions', 'minLaunches', 'maxLaunches'] as const) {
    if (!Number.isSafeInteger(options[key]) || options[key] < 0)
      throw new ArgumentError(key, 'must be a non-negative integer', options[key]);
  }
  if (options.repetitions < 1) throw new ArgumentError('repetitions', 'must be at least 1', options.repetitions);
  if (options.minLaunches < 1 || options.maxLaunches < options.minLaunches) {
    throw new ArgumentError('maxLaunches', 'must be ≥ minLaunches ≥ 1', {
      minLaunches: options.minLaunches,
      maxLaunches: options.maxLaunches,
    });
  }
  if (!(Number.isFinite(options.targetMs) && options.targetMs > 0))
    throw new ArgumentError('targetMs', 'must be a positive finite number', options.targetMs);
  const warm = options.warmupMs ?? 0;
  if (!(Number.isFinite(warm) && warm >= 0)) throw new ArgumentError('warmupMs', 'must be a finite number ≥ 0', options.warmupMs);
}
