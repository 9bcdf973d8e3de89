import {
  add,
  bitAnd,
  bitXor,
  cast,
  clusterCtaRank,
  clusterSync,
  div,
  int32,
  mapaShared,
  mbarrierArriveClusterWarp,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierWaitParityCluster,
  mul,
  pointer,
  storeAsyncClusterV4,
  eq,
  uint32,
  float32,
  index,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockGemmPolicyError, type WgmmaBlockGemmSs } from '@tilekit/gemm';
import type { ThreadScope } from '@tilekit/tile';
import { FmhaFwdChunkedQkSource } from './fmhaFwdChunkedQkSource.ts';
import type { FmhaFwdKOperand, FmhaFwdQkPlan } from './fmhaFwdQkSource.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

const CHUNK = 64;
/** Exchange buffers of partial S (each one tile of fp32 scores), used in turn. */
const BUFFERS = 2;

/**
 * Q·Kᵀ split across the two CTAs of a cluster that share a query tile (FFPA's large head dims
 * without recomputing S): each CTA streams its half of the head dim through the chunk ring
 * (`FmhaFwdChunkedQkSource`), so S holds a partial sum; the scoring threads then store it into the
 * peer CTA's shared memory (distributed shared memory), arrive on the peer's mbarrier and add the
 * peer's partial from their own, so both CTAs hold the same S (a + b = b + a exactly) and run the
 * same softmax. Each CTA owns half of O's columns (the instance offsets V and O by its rank). The
 * exchange uses two buffers of one fp32 tile in the Q region: the partial goes over with `st.async`,
 * which completes its bytes on the receiver's full barrier (armed by the receiver with the tile's
 * byte count; release at cluster scope), and the receiver's warps free the buffer on the sender's
 * empty barrier once they read it. Cluster barriers after the barriers' initialisation and before
 * the CTAs leave keep each CTA's shared memory alive while its peer uses it.
 */
export class FmhaFwdClusterQkSource extends FmhaFwdChunkedQkSource {
  override readonly tag = 'cluster';
  readonly clusterCtas = 2;

  constructor(stages: number) {
    super(stages, Object.freeze({ config: { qkChunkStages: stages, qkCluster: 2 }, tags: { qkChunkStages: 'qkc', qkCluster: 'cl' } }));
    Object.freeze(this);
  }

  override check(policy: FmhaFwdWsPolicy): void {
    super.check(policy);
    const bad = (rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError('FmhaFwdWsPipeline qkSource', rule, String(found));
    };
    if (policy.headDim % (CHUNK * this.clusterCtas) !== 0)
      bad(`splits the head dim in ${this.clusterCtas} whole sets of ${CHUNK}-column chunks: headDim a multiple of 128`, policy.headDim);
    if (policy.tileM !== 64 || policy.tileN !== 64)
      bad('exchanges 64×64 score tiles: tileM and tileN 64', `${policy.tileM}×${policy.tileN}`);
    if ((policy.outputSplit?.scoringSlices ?? 1) !== 1) bad('exchanges the S of one scoring warpgroup', policy.outputSplit?.tag);
  }

  /** One fp32 score tile per buffer, in the Q region (offset 0); the ring's barriers, then full[2] and empty[2]. */
  override plan(qk: WgmmaBlockGemmSs): FmhaFwdQkPlan {
    const ring = super.plan(qk);
    return { ...ring, qBytes: BUFFERS * qk.policy.tileM * qk.policy.tileN * 4, barriers: ring.barriers + 2 * BUFFERS };
  }

  protected override chunkCount(p: FmhaFwdWsContext['pipeline']): number {
    return p.slabsQK / this.clusterCtas;
  }

  /** This CTA's chunk `c`: its rank's half of the head dim. */
  protected override chunkColumn(l: BlockBuilder, ctx: FmhaFwdWsContext, c: number): Expr {
    const rank = l.let('cta_rank', int32, cast(clusterCtaRank(ctx.target), int32));
    return add(mul(rank, this.chunkCount(ctx.pipeline) * CHUNK), c * CHUNK);
  }

  #xFull(ctx: Pick<FmhaFwdWsContext, 'ring'>, buf: Expr | number): Expr {
    return add(ctx.ring.end, add(2 * this.stages, buf));
  }

  #xEmpty(ctx: Pick<FmhaFwdWsContext, 'ring'>, buf: Expr | number): Expr {
    return add(ctx.ring.end, add(2 * this.stages + BUFFERS, buf));
  }

  override emitInit(t: BlockBuilder, ctx: Pick<FmhaFwdWsContext, 'target' | 'ring'>, consumerWarps: number): void {
    super.emitInit(t, ctx, consumerWarps);
    for (let i = 0; i < BUFFERS; i++) {
      t.expr(mbarrierInit(ctx.target, this.#xFull(ctx, i), 1));
      t.expr(mbarrierInit(ctx.target, this.#xEmpty(ctx, i), consumerWarps));
    }
  }

  /** The peer CTA may arrive on this CTA's barriers only once they are initialised. */
  emitAfterInit(b: BlockBuilder, target: Target): void {
    b.comment('cluster barrier: both CTAs of the query tile have initialised their barriers');
    b.expr(clusterSync(target));
  }

  /**
   * No CTA leaves while its peer may still store into its shared memory or arrive on its barriers:
   * the consumers meet the peer's here (the producer threads only load into their own CTA, and a
   * cluster barrier waits for threads that have not exited).
   */
  emitBeforeExit(b: BlockBuilder, target: Target): void {
    b.comment("cluster barrier: the peer CTA is done with this CTA's shared memory");
    b.expr(clusterSync(target));
  }

  /** Word 4·v … 4·v + 3 of thread `tid`'s partial S in buffer `buf` (16 bytes; consecutive threads, consecutive vectors). */
  #slot(ctx: FmhaFwdWsContext, buf: Expr, v: number, tid: Expr): Expr {
    const tile = ctx.pipeline.qk.policy.tileM * ctx.pipeline.qk.policy.tileN * 4;
    return add(ctx.smem, add(mul(buf, tile), mul(add(v * ctx.pipeline.rowThreads, tid), 16)));
  }

  /** Frees the last chunk, then completes S with the peer's partial (see the class comment). */
  override releaseK(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand): void {
    super.releaseK(l, steps, k);
    const { ctx } = steps;
    const { target } = ctx;
    const { sAcc } = steps.state;
    const tileBytes = ctx.pipeline.qk.policy.tileM * ctx.pipeline.qk.policy.tileN * 4;
    l.comment("S = own partial + the peer CTA's partial: exchanged through distributed shared memory");
    const buf = l.let('sx_buf', int32, bitAnd(k.it, BUFFERS - 1));
    const parity = l.let('sx_parity', uint32, cast(bitAnd(div(k.it, BUFFERS), 1), uint32));
    const peer = l.let('sx_peer', uint32, bitXor(clusterCtaRank(target), 1));
    steps
      .threadsOf(l)
      .threads((t) => t.b.if(eq(t.tid, 0), (one) => one.expr(mbarrierArriveExpectTx(target, this.#xFull(ctx, buf), tileBytes))));
    l.expr(mbarrierWaitParityCluster(target, this.#xEmpty(ctx, buf), bitXor(parity, 1)));
    const peerFull = l.let('sx_peer_full', uint32, mapaShared(target, this.#xFull(ctx, buf), peer));
    steps.threadsOf(l).threads((t) => {
      // The peer's buffer is one contiguous window: map its first vector once, step from there.
      const remote = t.b.let('sx_remote', uint32, mapaShared(target, this.#slot(ctx, buf, 0, t.tid), peer));
      for (let v = 0; v < sAcc.size / 4; v++) {
        const values = [0, 1, 2, 3].map((i) => sAcc.at(t, 4 * v + i)) as [Expr, Expr, Expr, Expr];
        t.b.expr(storeAsyncClusterV4(target, add(remote, v * ctx.pipeline.rowThreads * 16), peerFull, values));
      }
    });
    l.expr(mbarrierWaitParityCluster(target, this.#xFull(ctx, buf), parity));
    steps.threadsOf(l).threads((t) => this.#addPeer(t, ctx, buf, sAcc.size, (i) => sAcc.at(t, i)));
    l.expr(mbarrierArriveClusterWarp(target, mapaShared(target, this.#xEmpty(ctx, buf), peer)));
  }

  #addPeer(t: ThreadScope, ctx: FmhaFwdWsContext, buf: Expr, size: number, at: (i: number) => Expr): void {
    for (let v = 0; v < size / 4; v++) {
      const words = cast(this.#slot(ctx, buf, v, t.tid), pointer(float32));
      for (let i = 0; i < 4; i++) t.b.assign(at(4 * v + i), add(at(4 * v + i), index(words, i)));
    }
  }
}
