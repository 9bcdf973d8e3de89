import {
  add,
  cast,
  eq,
  float32,
  gt,
  infinity,
  int32,
  lit,
  mbarrierArriveWarp,
  mbarrierWaitParity,
  mul,
  ne,
  not,
  packFloat2,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { BlockEmitter, clearTile, sweepTile, type DistributedTensor, type RegisterArray, type ThreadScope } from '@tilekit/tile';
import type { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import { emitFmhaFwdEpilogue } from './fmhaFwdEpilogue.ts';
import type { FmhaFwdKeyTileCursor } from './fmhaFwdKeyTiles.ts';
import type { FmhaFwdPvGateSite } from './fmhaFwdPvGate.ts';
import type { FmhaFwdKOperand } from './fmhaFwdQkSource.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';

/** A consumer warpgroup's registers and loop state, declared before its key loop. */
export interface FmhaFwdWsConsumerState {
  /** The consumer threads (every consumer warpgroup). */
  readonly block: BlockEmitter;
  /** S (then P) as float; with int8 Q·Kᵀ, S's int32 accumulator too. */
  readonly sAcc: DistributedTensor;
  readonly sAccInt: DistributedTensor | undefined;
  readonly oAcc: DistributedTensor;
  /** P packed into the P·V GEMM's A fragment. */
  readonly pFrag: RegisterArray;
  readonly softmax: BlockOnlineSoftmax;
  /** `int` consumer warpgroup of the thread among those of its rows (its A rows of Q·Kᵀ). */
  readonly warpgroup: Expr;
  /** `int` column slice of O the thread's warpgroup owns (with an output split). */
  readonly slice?: Expr | undefined;
  readonly cursor: FmhaFwdKeyTileCursor;
  /** The P·V gate (policy `pvGate`, Sparge's PV-skip vote). */
  readonly vote: FmhaFwdPvGateSite | undefined;
}

/**
 * The per-key-tile steps of the sm_90a forward's consumer warpgroups, the units its schedules
 * (`emitFmhaFwdWsSequentialLoop`, `emitFmhaFwdWsOverlappedLoop`) are made of: issue
 * S = Q·Kᵀ, the mask and the online softmax (S becomes P), O's rescale and P's packing, issue
 * O += P·V (gated by the vote), release the ring's stages, and the epilogue.
 */
export class FmhaFwdWsTileSteps {
  readonly ctx: FmhaFwdWsContext;
  readonly state: FmhaFwdWsConsumerState;
  readonly vote: FmhaFwdPvGateSite | undefined;

  constructor(ctx: FmhaFwdWsContext, state: FmhaFwdWsConsumerState) {
    this.ctx = ctx;
    this.state = state;
    this.vote = state.vote;
  }

  /** The first key row of tile `it` (local `j0`). */
  keyRow(l: BlockBuilder, it: Expr): Expr {
    return this.state.cursor.row(l, it, 'j0');
  }

  /** Key tile `it`'s K operand at ring stage `s` (the policy's Q·Kᵀ source; local `k_tile` for whole K tiles). */
  kOperand(l: BlockBuilder, it: Expr, s: Expr): FmhaFwdKOperand {
    return this.ctx.pipeline.qkSource.kOperand(l, this.ctx, it, s);
  }

  /** The shared address of V stage `s` (local `v_tile`). */
  vTile(l: BlockBuilder, s: Expr): Expr {
    const { pipeline: p, smemAddr } = this.ctx;
    return l.let('v_tile', uint32, add(smemAddr, cast(add(p.vOffset, mul(s, p.vStageBytes)), uint32)));
  }

  /** S = Q·Kᵀ of a tile once its K is there: committed, not waited (the policy's Q·Kᵀ source). */
  issueQk(l: BlockBuilder, k: FmhaFwdKOperand, parity: Expr): void {
    this.ctx.pipeline.qkSource.issueQk(l, this, k, parity);
  }

  /** Waits until at most `pending` Q·Kᵀ wgmma groups are in flight. */
  waitQk(l: BlockBuilder, pending: number): void {
    this.ctx.pipeline.qk.emitWait(l, this.ctx.target, this.state.sAccInt ?? this.state.sAcc, pending);
  }

  /** This warp is done with the tile's K (once its S is waited). */
  releaseK(l: BlockBuilder, k: FmhaFwdKOperand): void {
    this.ctx.pipeline.qkSource.releaseK(l, this, k);
  }

  /** This warp is done with V stage `s`. */
  releaseV(l: BlockBuilder, s: Expr): void {
    l.expr(mbarrierArriveWarp(this.ctx.target, this.ctx.ring.vEmpty(s)));
  }

  /** A block emitter of the consumer threads on `l`. */
  threadsOf(l: BlockBuilder): BlockEmitter {
    const { pipeline: p, target, args } = this.ctx;
    return new BlockEmitter(l, target, { numThreads: p.rowThreads, index: { symbols: args.symbols } }, this.state.block);
  }

  /** The Q·Kᵀ operand's dequantize step (int8 S to float); returns the softmax scale with the tile's scales joined. */
  dequantize(l: BlockBuilder, inner: BlockEmitter, j0: Expr): Expr {
    const { args, pipeline: p } = this.ctx;
    const { sAcc, sAccInt } = this.state;
    const operand = p.policy.qkOperand;
    if (operand === undefined || sAccInt === undefined || args.int8Scales === undefined) return args.scaleLog2;
    return operand.dequantize(l, inner, { sAcc, sRaw: sAccInt, scaleLog2: args.scaleLog2, scales: args.int8Scales, j0 });
  }

  /**
   * The score modifier's step (when the kernel has one): S becomes its log2-domain logits, before
   * the mask (a masked score stays −∞ whatever the modifier); returns the scale the softmax then
   * applies (1, or `scaleLog2` unchanged without a modifier).
   */
  modifyScores(l: BlockBuilder, inner: BlockEmitter, j0: Expr, scaleLog2: Expr): Expr {
    const mod = this.ctx.args.scoreModifier;
    if (mod === undefined) return scaleLog2;
    const m0 = this.ctx.args.m0;
    l.comment('the score modifier: S becomes its log2-domain logits');
    inner.threads((t) =>
      sweepTile(t, this.state.sAcc, (e) => e.b.assign(e.value, mod.logit(e.b, e.value, add(m0, e.x[0]!), add(j0, e.x[1]!), scaleLog2))),
    );
    return lit(1, float32);
  }

  /** The mask of S, on the tiles that need it. */
  mask(l: BlockBuilder, j0: Expr): void {
    const { args, pipeline: p } = this.ctx;
    l.comment('the mask, on the tiles that need it');
    l.if(args.mask.isEdgeTile(args.m0, j0, p.policy.tileM, p.policy.tileN), (mb) => {
      this.threadsOf(mb).threads((t) =>
        sweepTile(t, this.state.sAcc, (e) => {
          e.b.if(args.mask.isMasked(add(args.m0, e.x[0]!), add(j0, e.x[1]!)), (z) =>
            z.assign(e.value, infinity(float32, { negative: true })),
          );
        }),
      );
    });
  }

  /** The mask and the online softmax of the tile in S (S becomes P in place); `then` continues in the same thread scope. */
  softmaxTile(l: BlockBuilder, it: Expr, j0: Expr, then?: (t: ThreadScope, corr: DistributedTensor) => void): DistributedTensor {
    const { sAcc, softmax } = this.state;
    const vote = this.vote;
    const inner = this.threadsOf(l);
    const scaleLog2 = this.modifyScores(l, inner, j0, this.dequantize(l, inner, j0));
    this.mask(l, j0);
    vote?.emitBeginTile(l, it);
    let corr: DistributedTensor | undefined;
    inner.threads((t) => {
      t.b.comment('online softmax: S becomes P = 2^(S·scale·log2 e − m); O *= 2^(m_old − m_new)');
      corr = softmax.emitUpdate(t, sAcc, scaleLog2, vote === undefined ? {} : { gate: (delta) => vote.emitVote(t, delta) })!;
      then?.(t, corr);
    });
    return corr!;
  }

  /** O *= c where O holds anything yet, then P packed into the A fragment (zeros for a warp that voted skip). */
  rescaleAndPack(t: ThreadScope, oLive: Expr, corr: DistributedTensor): void {
    const { pipeline: p, target } = this.ctx;
    const { sAcc, oAcc, pFrag, softmax } = this.state;
    const vote = this.vote;
    t.b.if(oLive, (r) => softmax.emitRescale({ ...t, b: r }, oAcc, corr));
    t.b.comment('P to fp16/bf16 pairs: accumulator element 8·kk + i is A-fragment element i of k step kk');
    for (let r = 0; r < p.pv.aRegisters; r++)
      t.b.assign(pFrag.at(t, r), packFloat2(target, p.policy.dtype, sAcc.at(t, 2 * r), sAcc.at(t, 2 * r + 1)));
    if (vote !== undefined) {
      t.b.comment("a warp that voted skip feeds zeros to its warpgroup's P·V (a uniform, rarely taken branch)");
      t.b.if(not(vote.keep), (z) => {
        for (let r = 0; r < p.pv.aRegisters; r++) z.assign(pFrag.at({ ...t, b: z }, r), lit(0, uint32));
      });
    }
  }

  /** The output split's step once a tile's P is packed (an exchange of P and the rescale factors, or nothing). */
  publishP(l: BlockBuilder, it: Expr, corr: DistributedTensor): void {
    this.ctx.pipeline.policy.outputSplit?.emitPublish(l, this, it, corr);
  }

  /** Whether O holds anything before tile `it`'s rescale (the vote tracks it when present). */
  oLiveNow(it: Expr): Expr {
    return this.vote === undefined ? gt(it, 0) : ne(this.vote.oLive, 0);
  }

  /** The `int` accumulate flag of a P·V: O is written once a tile before `it` ran (`it > first`), or the vote's tracking. */
  pvAccumulate(it: Expr, first: number): Expr {
    return this.vote === undefined ? cast(gt(it, first), int32) : this.vote.oLive;
  }

  /** O += P·V of the tile whose V is in stage `s` once it is full; `compute` false skips it (the vote); `wait` waits for it. */
  issuePv(l: BlockBuilder, vAddr: Expr, s: Expr, parity: Expr, accumulate: Expr, compute: Expr | undefined, wait: boolean): void {
    const { pipeline: p, target, ring } = this.ctx;
    const { oAcc, pFrag } = this.state;
    l.comment('O += P·V (V as an MN-major B operand)');
    l.expr(mbarrierWaitParity(target, ring.vFull(s), parity));
    const slice = this.state.slice;
    const bTile = slice === undefined ? vAddr : add(vAddr, cast(mul(slice, p.pv.bTileBytes), uint32));
    const mma = (c: BlockBuilder): void => {
      p.pv.emitMma(c, target, oAcc, pFrag, { bTile, accumulate });
      if (wait) p.pv.emitWait(c, target, oAcc, 0, pFrag);
    };
    if (compute === undefined) mma(l);
    else {
      l.comment('the PV skip: a warpgroup whose rows all voted skip issues no P·V (V was loaded all the same)');
      l.if(compute, mma);
    }
  }

  /** Waits for every issued P·V. */
  waitPv(l: BlockBuilder): void {
    this.ctx.pipeline.pv.emitWait(l, this.ctx.target, this.state.oAcc, 0, this.state.pFrag);
  }

  /** After a tile's P·V (issued or skipped by the vote): O is live once one ran; the counters. */
  countPv(l: BlockBuilder, computed: Expr): void {
    this.vote?.emitAfterTile(l, computed);
  }

  /** After the key loop: the vote's counters, then O /= l (0 for rows with nothing unmasked), LSE and the predicated store. */
  epilogue(cons: BlockBuilder): void {
    const { pipeline: p, args, tid, iters } = this.ctx;
    const { block, softmax, oAcc } = this.state;
    const vote = this.vote;
    if (vote !== undefined) vote.emitStats(cons, tid);
    p.policy.outputSplit?.emitBeforeEpilogue(cons, this);
    cons.comment('epilogue: O /= l (0 for rows with nothing unmasked), LSE, predicated store');
    cons.if(vote === undefined ? eq(iters, 0) : eq(vote.oLive, 0), (z) => this.threadsOf(z).threads((t) => clearTile(t, oAcc)));
    const slice = this.state.slice;
    const columns = slice === undefined ? {} : { column0: mul(slice, p.pv.policy.tileN), writesLse: eq(slice, 0) };
    emitFmhaFwdEpilogue(block, softmax, oAcc, args, {
      tileM: p.policy.tileM,
      headDimV: p.pv.policy.tileN,
      oEncoding: p.pv.cEncoding,
      ...columns,
    });
  }
}
