import {
  add,
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
 * the consumers released it) the CTA's Q and dO slabs by TMA (zero-filled past the head dims) and
 * the tile's LSE and D rows by its lanes.
 */
export function emitFmhaBwdWsSplitDProducer(prod: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target, args, tid } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; lane 0 of its first warp issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
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
