import {
  add,
  bitXor,
  cast,
  int32,
  lit,
  mbarrierArriveExpectTx,
  mbarrierArriveWarp,
  mbarrierWaitParity,
  mul,
  pointer,
  tmaLoad,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import type { WgmmaBlockGemmSs } from '@tilekit/gemm';
import type { FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

const SLAB = 64;

/** How a source lays out shared memory: Q's bytes, then `kStages` K buffers of `kStageBytes`, and its own mbarriers. */
export interface FmhaFwdQkPlan {
  readonly qBytes: number;
  readonly kStages: number;
  readonly kStageBytes: number;
  /** mbarriers the source adds after the ring's (0: it uses the ring's K barriers). */
  readonly barriers: number;
}

/** Key tile `it`'s K operand as the consumers hold it between issuing S and releasing K. */
export interface FmhaFwdKOperand {
  readonly it: Expr;
  /** The ring stage of key tile `it`. */
  readonly s: Expr;
  /** `uint32` shared address of the tile's K (a source that keeps whole K tiles). */
  readonly addr?: Expr;
}

/**
 * How Q and K reach the Q·Kᵀ wgmmas of the sm_90a forward (the hook a policy carries, `qkSource`):
 * the producer's loads, the consumers' wait for Q, issuing S = Q·Kᵀ of a key tile and releasing its
 * K. The default, {@link FMHA_FWD_RESIDENT_QK}, keeps Q whole in shared memory and K in whole tiles;
 * `FmhaFwdChunkedQkSource` streams both through a ring in 64-column chunks of the head dim.
 */
export interface FmhaFwdQkSource {
  readonly tag: 'resident' | 'chunked' | 'cluster';
  /** The source's part of an instance key. */
  readonly key: FmhaFwdKeyPart;
  /** The largest head dim (of Q and K) the source takes. */
  readonly maxHeadDim: number;
  /** Throws BlockGemmPolicyError when `policy` cannot use the source. */
  check(policy: FmhaFwdWsPolicy): void;
  plan(qk: WgmmaBlockGemmSs, slabs: number, stages: number): FmhaFwdQkPlan;
  /** Thread 0, while the ring's barriers are initialised: the source's own (`consumerWarps` release each empty one). */
  emitInit(t: BlockBuilder, ctx: Pick<FmhaFwdWsContext, 'target' | 'ring'>, consumerWarps: number): void;
  /** The producer thread, before the key loop: Q (once, or nothing). */
  emitLoadQ(one: BlockBuilder, ctx: FmhaFwdWsContext): void;
  /** The producer thread, per key tile `it` at ring stage (s, parity), first key row `row`: its K (and Q). */
  emitLoadK(l: BlockBuilder, ctx: FmhaFwdWsContext, k: FmhaFwdKOperand, parity: Expr, row: Expr): void;
  /** The consumers, before the key loop: wait for Q (or nothing). */
  emitAwaitQ(cons: BlockBuilder, ctx: FmhaFwdWsContext): void;
  /** The consumers: key tile `it`'s K operand at ring stage `s` (locals it needs). */
  kOperand(l: BlockBuilder, ctx: FmhaFwdWsContext, it: Expr, s: Expr): FmhaFwdKOperand;
  /** S = Q·Kᵀ of the tile: committed; its last wgmma group may still run. */
  issueQk(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand, parity: Expr): void;
  /** Once S is waited: this warp is done with the tile's K. */
  releaseK(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand): void;
  /**
   * CTAs of a cluster that share each query tile, splitting Q·Kᵀ's head dim and O's columns
   * between them (grid y = heads · ctas, cluster [1, ctas, 1]); absent: one CTA per query tile.
   */
  readonly clusterCtas?: number;
  /** Every thread, after the barriers are initialised and the block synchronised (a cluster barrier). */
  emitAfterInit?(b: BlockBuilder, target: Target): void;
  /** The consumer threads, at the end of the kernel (a cluster barrier; the producer threads have exited by then or will). */
  emitBeforeExit?(b: BlockBuilder, target: Target): void;
}

function loadQOnce(one: BlockBuilder, ctx: FmhaFwdWsContext): void {
  const { pipeline: p, target, args, smem, ring } = ctx;
  one.expr(mbarrierArriveExpectTx(target, ring.qFull, p.qBytes));
  for (let c = 0; c < p.slabsQK; c++) {
    one.expr(
      tmaLoad(target, { dst: add(smem, c * p.qk.aTileBytes), map: args.qMap, bar: ring.qFull, coords: args.qCoords(c * SLAB, args.m0) }),
    );
  }
}

/** Waits K stage `s` empty, arms its full barrier and loads the key tile from `row`, slab by slab. */
function loadWholeK(l: BlockBuilder, ctx: FmhaFwdWsContext, k: FmhaFwdKOperand, parity: Expr, row: Expr): void {
  const { pipeline: p, target, args, ring } = ctx;
  const s = k.s;
  l.expr(mbarrierWaitParity(target, ring.kEmpty(s), bitXor(parity, 1)));
  l.expr(mbarrierArriveExpectTx(target, ring.kFull(s), p.kStageBytes));
  const kStage = l.let('k_stage', pointer(uint8), add(ctx.smem, add(p.kOffset, mul(s, p.kStageBytes))));
  for (let c = 0; c < p.slabsQK; c++)
    l.expr(
      tmaLoad(target, { dst: add(kStage, c * p.qk.bTileBytes), map: args.kMap, bar: ring.kFull(s), coords: args.kCoords(c * SLAB, row) }),
    );
}

function issueWholeQk(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand, parity: Expr): void {
  const { pipeline: p, target, ring, smemAddr: qAddr } = steps.ctx;
  l.comment('S = Q·Kᵀ over the head dim, one 64-wide slab per wgmma group');
  l.expr(mbarrierWaitParity(target, ring.kFull(k.s), parity));
  for (let c = 0; c < p.slabsQK; c++) {
    p.qk.emitMma(l, target, steps.state.sAccInt ?? steps.state.sAcc, {
      aTile: add(qAddr, c * p.qk.aTileBytes),
      bTile: add(k.addr!, c * p.qk.bTileBytes),
      warpgroup: steps.state.warpgroup,
      accumulate: lit(c === 0 ? 0 : 1, int32),
    });
  }
}

/** Q whole in shared memory (loaded once), K in whole tiles in the ring's K stages: the default. */
export const FMHA_FWD_RESIDENT_QK: FmhaFwdQkSource = Object.freeze({
  tag: 'resident',
  key: Object.freeze({ config: {}, tags: {} }),
  maxHeadDim: 256,
  check: () => undefined,
  plan: (qk: WgmmaBlockGemmSs, slabs: number, stages: number) => ({
    qBytes: slabs * qk.aTileBytes,
    kStages: stages,
    kStageBytes: slabs * qk.bTileBytes,
    barriers: 0,
  }),
  emitInit: () => undefined,
  emitLoadQ: loadQOnce,
  emitLoadK: loadWholeK,
  emitAwaitQ: (cons: BlockBuilder, ctx: FmhaFwdWsContext) => cons.expr(mbarrierWaitParity(ctx.target, ctx.ring.qFull, 0)),
  kOperand: (l: BlockBuilder, ctx: FmhaFwdWsContext, it: Expr, s: Expr) => ({
    it,
    s,
    addr: l.let('k_tile', uint32, add(ctx.smemAddr, cast(add(ctx.pipeline.kOffset, mul(s, ctx.pipeline.kStageBytes)), uint32))),
  }),
  issueQk: issueWholeQk,
  releaseK: (l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand) =>
    l.expr(mbarrierArriveWarp(steps.ctx.target, steps.ctx.ring.kEmpty(k.s))),
});
