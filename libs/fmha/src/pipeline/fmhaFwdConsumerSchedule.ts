import type { BlockBuilder } from '@tilekit/codegen';
import type { FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import { emitFmhaFwdWsOverlappedLoop } from './fmhaFwdWsOverlappedLoop.ts';
import { emitFmhaFwdWsSequentialLoop } from './fmhaFwdWsSequentialLoop.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/**
 * How the consumer warpgroups of the sm_90a forward order the per-tile steps of
 * `FmhaFwdWsTileSteps` over the key tiles: the hook a policy carries (`schedule`). The schedules
 * differ in timing only; every one computes the same values in the same order per row.
 */
export interface FmhaFwdConsumerSchedule {
  readonly tag: 'sequential' | 'softmaxOverlap' | 'pingPong';
  /** The schedule's part of an instance key. */
  readonly key: FmhaFwdKeyPart;
  /** Throws BlockGemmPolicyError when `policy` cannot run this schedule. */
  check(policy: FmhaFwdWsPolicy): void;
  /** The consumers' key loop: from the first tile's S to the last tile's P·V (the epilogue follows). */
  emit(cons: BlockBuilder, steps: FmhaFwdWsTileSteps): void;
}

/** One key tile at a time (the default): S, mask and softmax, then P·V waited before the next tile. */
export const FMHA_FWD_SEQUENTIAL_SCHEDULE: FmhaFwdConsumerSchedule = Object.freeze({
  tag: 'sequential',
  key: Object.freeze({ config: {}, tags: {} }),
  check: () => undefined,
  emit: emitFmhaFwdWsSequentialLoop,
});

/**
 * FlashAttention-3's intra-warpgroup overlap: the P·V of key tile i − 1 is issued with S of tile i
 * and runs while the warpgroup does tile i's mask and softmax. Its key field is `overlapSoftmax`
 * (the policy flag it replaces), so instance hashes stay what they were.
 */
export const FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE: FmhaFwdConsumerSchedule = Object.freeze({
  tag: 'softmaxOverlap',
  key: Object.freeze({ config: { overlapSoftmax: true }, tags: {} }),
  check: () => undefined,
  emit: (cons: BlockBuilder, steps: FmhaFwdWsTileSteps) => emitFmhaFwdWsOverlappedLoop(cons, steps),
});
