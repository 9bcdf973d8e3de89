// The loop every GPU replay of an invalid-argument fuzz runs (gemm, permute, fmha-fwd, fmha-bwd,
// sparge): each seeded invalid call gets its buffers materialized on the real device, is made once,
// and must be rejected with a typed error before any launch (the runtime's launch journal counts).
import { unsettledLaunches, type Device } from '../index.ts';
import {
  expectRejected,
  materialize,
  newTally,
  type BufferPlan,
  type FuzzTally,
  type InvalidCall,
  type MaterializedBuffers,
  type RejectionRules,
} from './fuzzHarness.ts';

/** One replay: the device, the sampled invalid calls, the compile counter and how each call is made. */
export interface InvalidCallReplay<C extends { readonly buffers: Readonly<Record<string, BufferPlan>> }> {
  readonly device: Device;
  readonly sets: readonly InvalidCall<C>[];
  /** Compile requests so far (a counting compiler's counter). */
  readonly compiles: () => number;
  /** Passed to `expectRejected` for every call (its defaults when absent). */
  readonly rules?: RejectionRules;
  /** Makes one call with its materialized buffers (freed once it returns or throws). */
  readonly call: (set: InvalidCall<C>, ranges: MaterializedBuffers['ranges']) => unknown;
}

/**
 * Synchronizes `device`, then runs every set of `replay.sets` through `expectRejected` (labelled by
 * its corruptions, joined with '; '). Returns the tally; the spec asserts on it and prints `fuzzLine`.
 * Throws what `expectRejected` throws for the first call accepted or rejected wrongly.
 */
export async function replayInvalidCalls<C extends { readonly buffers: Readonly<Record<string, BufferPlan>> }>(
  replay: InvalidCallReplay<C>,
): Promise<FuzzTally> {
  const tally = newTally();
  const counters = { launches: () => unsettledLaunches().count, compiles: replay.compiles };
  replay.device.synchronize();
  for (const set of replay.sets) {
    const run = async () => {
      const buffers = materialize(replay.device, set.call.buffers);
      try {
        await replay.call(set, buffers.ranges);
      } finally {
        buffers.dispose();
      }
    };
    await expectRejected(run, counters, tally, set.labels.join('; '), replay.rules);
  }
  return tally;
}
