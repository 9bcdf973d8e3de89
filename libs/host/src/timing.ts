import { ArgumentError } from '@tilekit/numeric';

/** Summary statistics of repeated timings, all in the unit of the input (ms by convention). */
export interface TimeSummary {
  /** Number of samples. */
  n: number;
  min: number;
  /** Middle sample; the mean of the two middle samples when n is even. */
  median: number;
  mean: number;
  max: number;
  /** Sample standard deviation (n − 1 in the denominator); 0 for a single sample. */
  stddev: number;
}

/**
 * Summarizes kernel timings (CK's `launch_kernel` reports only the mean of `-repeat` runs; we
 * keep the spread too). Samples must be finite and non-negative; an empty list is an error.
 * Postcondition (tested): min ≤ median ≤ max, min ≤ mean ≤ max, and the result does not depend
 * on the order of the samples.
 */
export function summarizeTimes(ms: readonly number[]): TimeSummary {
  if (ms.length === 0) throw new ArgumentError('summarizeTimes', 'needs at least one sample', ms);
  for (const t of ms) {
    if (!Number.isFinite(t) || t < 0) throw new ArgumentError('summarizeTimes', 'samples must be finite and non-negative', t);
  }
  const sorted = [...ms].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  let sum = 0;
  for (const t of sorted) sum += t;
  // Clamp: the rounded mean of equal samples can drift one ulp outside [min, max].
  const mean = Math.min(Math.max(sum / n, sorted[0]!), sorted[n - 1]!);
  let squares = 0;
  for (const t of sorted) squares += (t - mean) * (t - mean);
  const stddev = n > 1 ? Math.sqrt(squares / (n - 1)) : 0;
  return { n, min: sorted[0]!, median, mean, max: sorted[n - 1]!, stddev };
}

/** Throughput in TFLOP/s of `flop` floating-point operations done in `ms` milliseconds. */
export function tflops(flop: number, ms: number): number {
  checkRate(flop, ms, 'tflops');
  return flop / (ms * 1e9);
}

/** Bandwidth in GB/s (10^9 bytes per second) of `bytes` moved in `ms` milliseconds. */
export function gbPerSec(bytes: number, ms: number): number {
  checkRate(bytes, ms, 'gbPerSec');
  return bytes / (ms * 1e6);
}

function checkRate(amount: number, ms: number, argument: string): void {
  if (!Number.isFinite(amount) || amount < 0) throw new ArgumentError(argument, 'amount must be finite and non-negative', amount);
  if (!Number.isFinite(ms) || ms <= 0) throw new ArgumentError(argument, 'time must be a positive number of ms', ms);
}
