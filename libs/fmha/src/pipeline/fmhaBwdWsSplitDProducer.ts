import {
  add,
  bulkCommitGroup,
  bulkReduceAddF32,
  bulkWaitGroup,
  cast,
  float32,
  gt,
  maxOf,
  minOf,
  pointer,
  bitXor,
  bool,
  eq,
  int32,
  lit,
  lt,
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierWaitParity,
  mul,
  prefetchTensorMap,
  setMaxNReg,
  sub,
  tmaLoad,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { FMHA_BWD_SLAB, FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
import { FMHA_BWD_SPLIT_D_ANY_DQ_ORDER } from './fmhaBwdWsSplitDDqOrder.ts';
import { emitFmhaBwdRowStaging } from './fmhaBwdWsProducer.ts';
import {
  fmhaBwdWsSplitDColumn0,
  fmhaBwdWsSplitDQueries,
  fmhaBwdWsSplitDQueryTile,
  fmhaBwdWsSplitDRows,
  fmhaBwdWsSplitDStage,
  type FmhaBwdWsSplitDContext,
} from './fmhaBwdWsSplitDContext.ts';

/**
 * The producer warpgroup of `FmhaBwdWsSplitDPipeline`: registers down to `producerRegisters`; its
 * first warp loads the CTA's columns of K and V once, then per query tile (into the next stage, once
 * the dQ warp released it) the CTA's Q and dO slabs by TMA (zero-filled past the head dims) and
 * the tile's LSE and D rows by its lanes; lane 0 of its second warp (the dQ warp) moves each tile's
 * staged dQ into dq_acc.
 */
export function emitFmhaBwdWsSplitDProducer(prod: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target, args, tid } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; lane 0 of its first warp issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
  prod.if(eq(tid, p.consumerThreads + 32), (dq) => emitDqWarp(dq, ctx));
  prod.if(lt(tid, p.consumerThreads + 32), (one) => {
    const lane = one.let('lane', int32, sub(tid, p.consumerThreads));
    const leader = one.let('tma_lane', bool, eq(lane, 0));
    const col0 = fmhaBwdWsSplitDColumn0(one, ctx);
    one.if(leader, (x) => {
      for (const map of [args.qMap, args.kMap, args.vMap, args.doMap]) x.expr(prefetchTensorMap(target, map));
      emitKeyValueLoads(x, ctx, col0);
    });
    const loads = one.declare('slice_loads', int32, 0, { storage: 'mutable' });
    const q = fmhaBwdWsSplitDQueries(one, ctx);
    one.forRange({ name: 'it', to: q.iters }, (li, it) => {
      const { head, i0 } = fmhaBwdWsSplitDQueryTile(li, ctx, q, it);
      const { stage, parity } = fmhaBwdWsSplitDStage(li, ctx, loads);
      li.expr(mbarrierWaitParity(target, ctx.sliceEmpty(stage), bitXor(parity, 1)));
      li.if(leader, (x) => emitSliceLoads(x, ctx, { stage, col0, i0, head }));
      emitFmhaBwdRowStaging(li, args, { lane, i0, head, tileM: p.tileM }, (bb) => fmhaBwdWsSplitDRows(bb, ctx, stage));
      li.expr(mbarrierArrive(target, ctx.sliceFull(stage)));
      li.assign(loads, add(loads, 1));
    });
  });
}

/** The CTA's slabs of K and V for the cluster's 64 keys, on one barrier. */
function emitKeyValueLoads(x: BlockBuilder, ctx: FmhaBwdWsSplitDContext, col0: Expr): void {
  const { pipeline: p, target, args, smem, kvFull } = ctx;
  x.comment('K and V of the keys × this CTA’s columns (once)');
  x.expr(mbarrierArriveExpectTx(target, kvFull, 2 * p.sliceSlabs * FMHA_BWD_SLAB_BYTES));
  for (const [map, base] of [
    [args.kMap, p.offsets.k],
    [args.vMap, p.offsets.v],
  ] as const)
    for (let u = 0; u < p.sliceSlabs; u++)
      x.expr(
        tmaLoad(target, {
          dst: add(smem, base + u * FMHA_BWD_SLAB_BYTES),
          map,
          bar: kvFull,
          coords: args.kvCoords(add(col0, lit(u * FMHA_BWD_SLAB, int32)), args.n0),
        }),
      );
}

/** The TMA lane: the CTA's Q and dO slabs of query rows i0 … of `head` into stage `stage`. */
function emitSliceLoads(
  x: BlockBuilder,
  ctx: FmhaBwdWsSplitDContext,
  at: { readonly stage: Expr; readonly col0: Expr; readonly i0: Expr; readonly head: Expr },
): void {
  const { target, args, smem, pipeline: p } = ctx;
  x.expr(mbarrierArriveExpectTx(target, ctx.sliceFull(at.stage), p.stageBytes));
  for (const [map, base] of [
    [args.qMap, p.offsets.qSlice],
    [args.doMap, p.offsets.doSlice],
  ] as const)
    for (let u = 0; u < p.sliceSlabs; u++)
      x.expr(
        tmaLoad(target, {
          dst: add(smem, add(base + u * FMHA_BWD_SLAB_BYTES, mul(at.stage, p.stageBytes))),
          map,
          bar: ctx.sliceFull(at.stage),
          coords: args.qCoords(add(at.col0, lit(u * FMHA_BWD_SLAB, int32)), at.i0, at.head),
        }),
      );
}

/**
 * The dQ warp's lane: per query tile, once the consumers staged its dQ (fp32 rows of sliceWidth
 * floats over the stage), one bulk reduce-add per row inside the sequence of the CTA's columns
 * inside d into dq_acc; once they have read the stage, the stage is free for the next Q and dO.
 */
function emitDqWarp(dq: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target, args, smem } = ctx;
  const order = p.policy.dqOrder ?? FMHA_BWD_SPLIT_D_ANY_DQ_ORDER;
  const W = p.policy.sliceWidth;
  const col0 = fmhaBwdWsSplitDColumn0(dq, ctx);
  const bytes = dq.let('dq_row_bytes', int32, mul(maxOf(minOf(sub(p.policy.headDim, col0), W), 0), 4));
  const tiles = dq.declare('dq_tiles', int32, 0, { storage: 'mutable' });
  const q = fmhaBwdWsSplitDQueries(dq, ctx);
  dq.forRange({ name: 'it', to: q.iters }, (li, it) => {
    const { head, i0 } = fmhaBwdWsSplitDQueryTile(li, ctx, q, it);
    const { stage, parity } = fmhaBwdWsSplitDStage(li, ctx, tiles);
    li.expr(mbarrierWaitParity(target, ctx.dqStaged(stage), parity));
    order.emitAdds(li, ctx, { head, i0 }, (ab) => {
      ab.if(gt(bytes, 0), (rb) => {
        const dqRow = args.dqRow(rb, head);
        const staging = rb.let(
          'dq_stage',
          pointer(float32),
          cast(add(smem, add(p.offsets.qSlice, mul(stage, p.stageBytes))), pointer(float32)),
        );
        const rows = rb.let('dq_rows', int32, minOf(sub(args.seqlenQ, i0), p.tileM));
        rb.forRange({ name: 'r', to: rows }, (lr, r) =>
          lr.expr(
            bulkReduceAddF32(
              target,
              add(dqRow, add(mul(add(i0, r), p.policy.headDim), col0)),
              cast(add(staging, mul(r, W)), pointer(float32, { const: true })),
              bytes,
            ),
          ),
        );
        rb.expr(bulkCommitGroup(target));
        rb.expr(bulkWaitGroup(target, 0, { read: true }));
      });
      ab.expr(mbarrierArrive(target, ctx.sliceEmpty(stage)));
    });
    li.assign(tiles, add(tiles, 1));
  });
  dq.comment('every bulk reduction complete before the CTA exits');
  dq.expr(bulkWaitGroup(target, 0));
}
