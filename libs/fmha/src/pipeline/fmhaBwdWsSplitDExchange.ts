// The butterfly that completes the partial Sᵀ and dPᵀ of FmhaBwdWsSplitDPipeline's CTAs through
// distributed shared memory (see the pipeline's class comment for the hand-offs).
import {
  add,
  bitAnd,
  bitXor,
  cast,
  eq,
  float32,
  index,
  int32,
  lit,
  lt,
  shl,
  mapaShared,
  mbarrierArriveClusterWarp,
  mbarrierArriveExpectTx,
  mbarrierWaitParityCluster,
  mul,
  pointer,
  select,
  storeAsyncClusterV4,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import type { BlockEmitter, DistributedTensor, ThreadScope } from '@tilekit/tile';
import type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';

/** What the exchange reads and completes: the consumers' emitter and the partial accumulators. */
export interface FmhaBwdWsSplitDPartials {
  readonly ctx: FmhaBwdWsSplitDContext;
  emitter(bb: BlockBuilder): BlockEmitter;
  readonly sAcc: DistributedTensor;
  readonly dpAcc: DistributedTensor;
}

/** Floats 4v … 4v + 3 of a thread's partials: Sᵀ's registers, then dPᵀ's. */
function partial(x: FmhaBwdWsSplitDPartials, t: ThreadScope, i: number): Expr {
  const n = x.sAcc.size;
  return i < n ? x.sAcc.at(t, i) : x.dpAcc.at(t, i - n);
}

/** Vector v (16 bytes) of consumer thread `tid`'s partials in the exchange buffer: consecutive threads, consecutive vectors. */
function slot(ctx: FmhaBwdWsSplitDContext, v: number, tid: Expr): Expr {
  return add(ctx.smem, add(ctx.pipeline.offsets.x, mul(add(v * ctx.pipeline.consumerThreads, tid), 16)));
}

/** The peer of exchange step k: rank ⊕ 2^k. */
function peerOf(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, k: Expr): Expr {
  return b.let('x_peer', uint32, cast(bitXor(ctx.rank, shl(1, k)), uint32));
}

/**
 * The exchange steps of query tile number `tile` (0, 1, … per CTA), one loop iteration each (the
 * same registers every step): at step k the partials go into the peer's buffer once it is free
 * (`st.async`, completing on the peer's full barrier), the peer's are added from this CTA's buffer
 * once landed, and — before the last step — the buffer is freed for the next step's peer. The last
 * step's buffer stays taken (Pᵀ and dSᵀ go there) until {@link emitFmhaBwdWsSplitDRelease}.
 */
export function emitFmhaBwdWsSplitDExchange(b: BlockBuilder, x: FmhaBwdWsSplitDPartials, tile: Expr): void {
  const { ctx } = x;
  const { pipeline: p, target, tid } = ctx;
  const E = p.exchanges;
  if (E === 0) return;
  const vectors = (x.sAcc.size + x.dpAcc.size) / 4;
  const parity = b.let('x_parity', uint32, cast(bitAnd(tile, 1), uint32));
  b.comment(`${E} exchange step(s): partial Sᵀ and dPᵀ with CTA rank ⊕ 2^k through distributed shared memory`);
  b.forRange({ name: 'xk', to: E, unroll: 1 }, (l, k) => {
    const peer = peerOf(l, ctx, k);
    l.if(eq(tid, 0), (one) => one.expr(mbarrierArriveExpectTx(target, ctx.xFull(k), p.exchangeBytes)));
    // Step 0's peer freed its buffer at the end of its previous tile (so the first wait passes at
    // once); a later step's peer frees it during this tile, once it has read its own step k − 1.
    const emptyParity = E === 1 ? bitXor(parity, 1) : select(eq(k, 0), bitXor(parity, 1), parity);
    l.expr(mbarrierWaitParityCluster(target, ctx.xEmpty(k), emptyParity));
    const peerFull = l.let('x_peer_full', uint32, mapaShared(target, ctx.xFull(k), peer));
    x.emitter(l).threads((t) => {
      const remote = t.b.let('x_remote', uint32, mapaShared(target, slot(ctx, 0, tid), peer));
      for (let v = 0; v < vectors; v++) {
        const values = [0, 1, 2, 3].map((i) => partial(x, t, 4 * v + i)) as [Expr, Expr, Expr, Expr];
        t.b.expr(storeAsyncClusterV4(target, add(remote, v * p.consumerThreads * 16), peerFull, values));
      }
    });
    l.expr(mbarrierWaitParityCluster(target, ctx.xFull(k), parity));
    x.emitter(l).threads((t) => {
      for (let v = 0; v < vectors; v++) {
        const words = t.b.let('x_words', pointer(float32), cast(slot(ctx, v, tid), pointer(float32)));
        for (let i = 0; i < 4; i++) t.b.assign(partial(x, t, 4 * v + i), add(partial(x, t, 4 * v + i), index(words, i)));
      }
    });
    if (E > 1)
      l.if(lt(add(k, 1), E), (f) => {
        f.comment("this CTA's buffer read: free for the next step's peer");
        f.expr(mbarrierArriveClusterWarp(target, mapaShared(target, ctx.xEmpty(add(k, 1)), peerOf(f, ctx, add(k, 1)))));
      });
  });
}

/** After the query tile's GEMMs read Pᵀ and dSᵀ: this CTA's buffer is free for step 0's peer (each warp arrives once). */
export function emitFmhaBwdWsSplitDRelease(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  if (ctx.pipeline.exchanges === 0) return;
  b.comment("Pᵀ and dSᵀ read: this CTA's exchange buffer is free for step 0's peer");
  b.expr(mbarrierArriveClusterWarp(ctx.target, mapaShared(ctx.target, ctx.xEmpty(lit(0, int32)), cast(bitXor(ctx.rank, 1), uint32))));
}
