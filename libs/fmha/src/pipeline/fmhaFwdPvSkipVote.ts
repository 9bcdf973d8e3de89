import {
  add,
  and,
  bitAnd,
  bool,
  call,
  cast,
  eq,
  float32,
  gt,
  infinity,
  int32,
  lit,
  lt,
  namedBarrierArrive,
  namedBarrierSync,
  index,
  div,
  mul,
  ne,
  or,
  pointer,
  select,
  sub,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { makeDistributedTensor, sweepTile, type BlockEmitter, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import type { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import type { FmhaFwdPvSkipArgs } from './fmhaFwdWsPipeline.ts';

/** PV-skip modes as the kernels' `int` argument: upstream's kPerWarp and kPerBlock, and none. */
export const FMHA_PV_SKIP_MODES = Object.freeze({ none: 0, warp: 1, block: 2 });

/** Hardware barriers of the votes, one per round: the block vote uses 1 … 3, warpgroup g's own vote 4 + 3g … 6 + 3g. */
const BLOCK_VOTE_BARRIER = 1;
const WARPGROUP_VOTE_BARRIER = 4;

/** What the vote needs of the consumer loop. */
export interface FmhaFwdPvSkipVoteArgs extends FmhaFwdPvSkipArgs {
  /** `int` key tiles this query tile visits (the last always computes). */
  readonly iters: Expr;
  readonly m0: Expr;
  readonly seqlenQ: Expr;
  /** `int` consumer warpgroup of the thread. */
  readonly warpgroup: Expr;
  /** `int` thread index (consumer threads are 0 … consumerThreads − 1). */
  readonly tid: Expr;
  readonly consumerThreads: number;
  /** `int*` of {@link FMHA_PV_VOTE_SHARED_BYTES} bytes of shared memory: the warps' votes of the last three tiles. */
  readonly votes: Expr;
}

/** Vote slots rotate over three tiles: the K/V ring keeps every warp within two tiles of the slowest, so a slot is never rewritten before all its readers are done. */
const VOTE_ROUNDS = 3;

/** Shared memory of the vote: one int per consumer warp (up to 16) and round. */
export const FMHA_PV_VOTE_SHARED_BYTES = VOTE_ROUNDS * 16 * 4;

/**
 * Sparge's PV skip (SpargeAttn paper, arXiv 2502.18137, §3.4) for the consumer warpgroups of the sm_90a forward pipeline, as
 * block code. Per visited key tile but the last, every row r has Δ(r) = m_loc(r) − m_prev(r) (log2
 * units; −∞ when the tile masks the whole row) and a group of rows computes P·V iff
 * max_r Δ(r) + threshold > 0; a skipped group adds nothing to l and its P·V is not issued (O and l are
 * still rescaled to the new max). Groups: `warp` — a warp's 16 rows (the paper's per-warp test);
 * the warpgroup's wgmma is skipped only when its four warps all skip, otherwise the skipping warps
 * feed zeros — and `block` — every query row of the block (upstream's shipped kPerBlock), one
 * `bar.red.or` across the consumer warpgroups. Rows past seqlenQ do not vote (their zero logits
 * would always vote "compute"). The mode is a runtime value, uniform over the block, so every
 * barrier is reached by all consumer threads or by none.
 */
export class FmhaFwdPvSkipVote {
  readonly args: FmhaFwdPvSkipVoteArgs;
  readonly target: Target;
  /** 1 for rows < seqlenQ (the row distribution of the softmax state). */
  readonly rowLive: DistributedTensor;
  /** `int` 0 until the first P·V wgmma of this warpgroup wrote O (scale-d of the next one). */
  readonly oLive: VarExpr;
  readonly computed: VarExpr;
  readonly skipped: VarExpr;
  #keep: VarExpr | undefined;
  #compute: VarExpr | undefined;
  #eligible: VarExpr | undefined;
  #it: Expr | undefined;

  /** Declares the loop-invariant state in the consumer scope `b` (before the key loop). */
  constructor(b: BlockBuilder, target: Target, block: BlockEmitter, softmax: BlockOnlineSoftmax, args: FmhaFwdPvSkipVoteArgs) {
    this.args = args;
    this.target = target;
    this.rowLive = makeDistributedTensor(block, 'row_live', softmax.rowEncoding, int32);
    block.threads((t) =>
      sweepTile(t, this.rowLive, (e) => e.b.assign(e.value, select(lt(add(args.m0, e.x[0]!), args.seqlenQ), lit(1, int32), lit(0, int32)))),
    );
    this.oLive = b.declare('o_live', int32, 0, { storage: 'mutable' });
    this.computed = b.declare('pv_computed', int32, 0, { storage: 'mutable' });
    this.skipped = b.declare('pv_skipped', int32, 0, { storage: 'mutable' });
  }

  /** Per key tile, before the softmax: whether this tile may skip at all, and the vote's results (default: compute). */
  emitBeginTile(l: BlockBuilder, it: Expr): void {
    this.#it = it;
    // +∞ never skips (not even a tile that masks every row of the group).
    this.#eligible = l.let(
      'pv_eligible',
      bool,
      and(and(ne(this.args.mode, 0), lt(this.args.threshold, infinity(float32))), lt(it, sub(this.args.iters, 1))),
    );
    this.#keep = l.declare('pv_keep', bool, lit(true, bool), { storage: 'mutable' });
    this.#compute = l.declare('pv_compute', bool, lit(true, bool), { storage: 'mutable' });
  }

  /** Whether this thread's rows accumulate the tile (uniform over the vote group). */
  get keep(): VarExpr {
    return this.#need(this.#keep);
  }

  /** Whether this warpgroup issues the P·V wgmma (uniform over the warpgroup). */
  get compute(): VarExpr {
    return this.#need(this.#compute);
  }

  #need(v: VarExpr | undefined): VarExpr {
    if (v === undefined) throw new Error('FmhaFwdPvSkipVote: emitBeginTile must run first');
    return v;
  }

  /**
   * The vote, given Δ of the thread's rows (the softmax's `gate` hook): sets and returns `keep`.
   * Emitted by every consumer thread (straight-line code around the barriers).
   */
  emitVote(t: ThreadScope, rowDelta: readonly Expr[]): Expr {
    const b = t.b;
    const keep = this.keep;
    const compute = this.compute;
    const target = this.target;
    let mine: Expr = lit(false, bool);
    rowDelta.forEach((delta, r) => {
      mine = or(mine, and(ne(this.rowLive.at(t, r), 0), gt(add(delta, this.args.threshold), lit(0, float32))));
    });
    const vote = b.let('pv_vote', bool, mine);
    b.if(this.#need(this.#eligible), (e) => {
      // A warp that votes "compute" knows the group's answer (an OR) and only arrives; a warp that
      // votes "skip" waits for the group's warps and reads their votes. With few skips nobody waits.
      const warpVote = e.let('pv_warp_vote', bool, target.any(vote));
      const round = e.let('pv_round', int32, sub(this.#it!, mul(div(this.#it!, VOTE_ROUNDS), VOTE_ROUNDS)));
      const warp = e.let('pv_warp', int32, div(this.args.tid, 32));
      const slots = e.let('pv_slots', pointer(int32), add(this.args.votes, mul(round, 16)));
      e.if(eq(bitAnd(this.args.tid, 31), 0), (w) => w.assign(index(slots, warp), select(warpVote, lit(1, int32), lit(0, int32))));
      const groupVote = (g: BlockBuilder, id: Expr, threads: number, firstWarp: Expr): void => {
        g.if(
          warpVote,
          (c) => {
            c.expr(namedBarrierArrive(target, id, threads));
            c.assign(compute, lit(true, bool));
          },
          (w) => {
            w.expr(namedBarrierSync(target, id, threads));
            let any: Expr = lit(false, bool);
            for (let i = 0; i < threads / 32; i++) any = or(any, ne(index(slots, add(firstWarp, i)), 0));
            w.assign(compute, any);
          },
        );
      };
      e.if(
        eq(this.args.mode, 1),
        (w) => {
          w.assign(keep, warpVote);
          groupVote(w, add(add(WARPGROUP_VOTE_BARRIER, mul(this.args.warpgroup, VOTE_ROUNDS)), round), 128, mul(this.args.warpgroup, 4));
        },
        (k) => {
          groupVote(k, add(BLOCK_VOTE_BARRIER, round), this.args.consumerThreads, lit(0, int32));
          k.assign(keep, compute);
        },
      );
    });
    return keep;
  }

  /** After a tile's P·V, issued when `computed` (the tile's vote, maybe carried over a loop iteration): O is live once one ran; the counters. */
  emitAfterTile(l: BlockBuilder, computed: Expr): void {
    l.if(
      computed,
      (c) => {
        c.assign(this.oLive, 1);
        c.assign(this.computed, add(this.computed, 1));
      },
      (k) => k.assign(this.skipped, add(this.skipped, 1)),
    );
  }

  /** After the loop: warpgroup leaders add their counts to `stats` (when not null). */
  emitStats(b: BlockBuilder, tid: Expr): void {
    b.if(and(this.args.stats, eq(bitAnd(tid, 127), 0)), (s) => {
      const stats = s.let('pv_stats', pointer(uint64), this.args.stats);
      s.expr(call('atomicAdd', [stats, cast(this.computed, uint64)], uint64));
      s.expr(call('atomicAdd', [add(stats, 1), cast(this.skipped, uint64)], uint64));
    });
  }
}
