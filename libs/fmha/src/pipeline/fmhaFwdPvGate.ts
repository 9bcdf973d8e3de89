import type { BlockBuilder, Expr, Target } from '@tilekit/codegen';
import type { BlockEmitter, ThreadScope } from '@tilekit/tile';
import type { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import type { FmhaFwdPvSkipArgs, FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/** What a gate needs of the consumer warpgroups, given before their key loop. */
export interface FmhaFwdPvGateContext {
  readonly target: Target;
  /** The consumer threads and the online softmax (the gate decides on its row maxima). */
  readonly block: BlockEmitter;
  readonly softmax: BlockOnlineSoftmax;
  /** `int` key tiles this query tile visits. */
  readonly iters: Expr;
  readonly m0: Expr;
  readonly seqlenQ: Expr;
  /** `int` consumer warpgroup and thread index (consumer threads are 0 … consumerThreads − 1). */
  readonly warpgroup: Expr;
  readonly tid: Expr;
  readonly consumerThreads: number;
  /** `uint8*` of the gate's own shared-memory area ({@link FmhaFwdPvGate.sharedBytes}, 16-byte aligned). */
  readonly shared: Expr;
}

/** A gate in one consumer scope: what the per-tile steps ask of it. */
export interface FmhaFwdPvGateSite {
  /** `int` 0 until this warpgroup's first P·V wrote O (the next P·V's accumulate flag). */
  readonly oLive: Expr;
  /** `bool`: this thread's rows accumulate the tile (valid after {@link emitVote}). */
  readonly keep: Expr;
  /** `bool`: this warpgroup issues the tile's P·V (valid after {@link emitVote}). */
  readonly compute: Expr;
  /** Per key tile `it`, before its softmax. */
  emitBeginTile(l: BlockBuilder, it: Expr): void;
  /** The decision, given the rows' Δ = m_loc − m_prev (the softmax's `gate` hook); returns `keep`. */
  emitVote(t: ThreadScope, rowDelta: readonly Expr[]): Expr;
  /** After a tile's P·V, issued when `computed`. */
  emitAfterTile(l: BlockBuilder, computed: Expr): void;
  /** After the key loop (counters). */
  emitStats(b: BlockBuilder, tid: Expr): void;
}

/**
 * A P·V gate of the sm_90a forward pipeline, the hook a policy carries (Sparge's PV-skip vote):
 * per visited key tile, groups of rows may skip P·V. It names its shared memory (placed after the
 * key-tile walk's), checks the policy it is part of, and creates its consumer-side state from the
 * kernel's runtime values ({@link FmhaFwdPvSkipArgs}).
 */
export interface FmhaFwdPvGate {
  /** Instance-name tag (`pvskip`). */
  readonly tag: 'pvskip';
  /** Shared memory the gate needs. */
  readonly sharedBytes: number;
  /** Throws BlockGemmPolicyError when `policy` cannot carry the gate. */
  check(policy: FmhaFwdWsPolicy): void;
  /** Declares the gate's loop-invariant state in the consumer scope `b` (before the key loop). */
  create(b: BlockBuilder, ctx: FmhaFwdPvGateContext, values: FmhaFwdPvSkipArgs): FmhaFwdPvGateSite;
}
