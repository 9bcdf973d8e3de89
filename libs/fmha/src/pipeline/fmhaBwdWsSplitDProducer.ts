import {
  add,
  bitAnd,
  bitXor,
  bool,
  cast,
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
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { FMHA_BWD_SLAB, FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
import { emitFmhaBwdRowStaging } from './fmhaBwdWsProducer.ts';
import {
  fmhaBwdWsSplitDQueries,
  fmhaBwdWsSplitDQueryTile,
  fmhaBwdWsSplitDRingSlab,
  fmhaBwdWsSplitDRingSlot,
  fmhaBwdWsSplitDRows,
  fmhaBwdWsSplitDSlabs,
  type FmhaBwdWsSplitDContext,
  type FmhaBwdWsSplitDSlabs,
} from './fmhaBwdWsSplitDContext.ts';

/** The producer warp's values: its lane, the TMA lane's predicate, ring loads issued, slices issued. */
interface ProducerWarp {
  readonly lane: Expr;
  readonly leader: Expr;
  readonly loads: Expr;
  readonly tiles: Expr;
  readonly slabs: FmhaBwdWsSplitDSlabs;
}

/**
 * The producer warpgroup of `FmhaBwdWsSplitDPipeline`: registers down to `producerRegisters`; its
 * first warp loads K and V once, then per query tile Q's ring slabs, the slice (Q and dO slabs
 * of the block's columns, LSE and D rows) and dO's ring slabs, in the order the consumers use them.
 */
export function emitFmhaBwdWsSplitDProducer(prod: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target, args, tid } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; lane 0 of its first warp issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
  prod.if(lt(tid, p.consumerThreads + 32), (one) => {
    const lane = one.let('lane', int32, sub(tid, p.consumerThreads));
    const leader = one.let('tma_lane', bool, eq(lane, 0));
    one.if(leader, (x) => {
      for (const map of [args.qMap, args.kMap, args.vMap, args.doMap]) x.expr(prefetchTensorMap(target, map));
      emitKeyValueLoads(x, ctx);
    });
    const slabs = fmhaBwdWsSplitDSlabs(one, ctx);
    const loads = one.declare('ring_loads', int32, 0, { storage: 'mutable' });
    const tiles = one.declare('slice_loads', int32, 0, { storage: 'mutable' });
    const warp: ProducerWarp = { lane, leader, loads, tiles, slabs };
    const q = fmhaBwdWsSplitDQueries(one, ctx);
    one.forRange({ name: 'it', to: q.iters }, (li, it) => {
      const { head, i0 } = fmhaBwdWsSplitDQueryTile(li, ctx, q, it);
      emitRingLoads(li, ctx, warp, { map: args.qMap, count: slabs.qRing, inSlice: slabs.qSlice, i0, head });
      emitSliceLoads(li, ctx, warp, i0, head);
      emitRingLoads(li, ctx, warp, { map: args.doMap, count: slabs.vRing, inSlice: slabs.vSlice, i0, head });
    });
  });
}

/** K and V of the block's 64 keys, every slab, on one barrier. */
function emitKeyValueLoads(x: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target, args, smem, kvFull } = ctx;
  x.comment('K and V of the block’s keys, whole head dims (once)');
  x.expr(mbarrierArriveExpectTx(target, kvFull, (p.qkSlabs + p.vSlabs) * FMHA_BWD_SLAB_BYTES));
  for (const [map, base, slabs] of [
    [args.kMap, p.offsets.k, p.qkSlabs],
    [args.vMap, p.offsets.v, p.vSlabs],
  ] as const)
    for (let c = 0; c < slabs; c++)
      x.expr(
        tmaLoad(target, {
          dst: add(smem, base + c * FMHA_BWD_SLAB_BYTES),
          map,
          bar: kvFull,
          coords: args.kvCoords(lit(c * FMHA_BWD_SLAB, int32), args.n0),
        }),
      );
}

/** `count` ring slabs of one operand (those outside the slice), each into the next ring slot once released. */
function emitRingLoads(
  li: BlockBuilder,
  ctx: FmhaBwdWsSplitDContext,
  warp: ProducerWarp,
  op: { readonly map: Expr; readonly count: Expr; readonly inSlice: Expr; readonly i0: Expr; readonly head: Expr },
): void {
  const { target, args, smem, pipeline: p } = ctx;
  li.forRange({ name: 'j', to: op.count }, (lj, j) => {
    const { slot, parity } = fmhaBwdWsSplitDRingSlot(lj, ctx, warp.loads);
    const c = fmhaBwdWsSplitDRingSlab(lj, j, warp.slabs.slab0, op.inSlice);
    lj.if(warp.leader, (x) => {
      x.expr(mbarrierWaitParity(target, ctx.ringEmpty(slot), bitXor(parity, 1)));
      x.expr(mbarrierArriveExpectTx(target, ctx.ringFull(slot), FMHA_BWD_SLAB_BYTES));
      x.expr(
        tmaLoad(target, {
          dst: add(smem, add(p.offsets.ring, mul(slot, FMHA_BWD_SLAB_BYTES))),
          map: op.map,
          bar: ctx.ringFull(slot),
          coords: args.qCoords(mul(c, FMHA_BWD_SLAB), op.i0, op.head),
        }),
      );
    });
    lj.assign(warp.loads, add(warp.loads, 1));
  });
}

/**
 * The slice of a query tile, once the consumers released the previous one: the Q and dO slabs of
 * the block's columns by TMA (zero-filled past the head dims), LSE and D rows by the warp's lanes.
 */
function emitSliceLoads(li: BlockBuilder, ctx: FmhaBwdWsSplitDContext, warp: ProducerWarp, i0: Expr, head: Expr): void {
  const { target, args, smem, pipeline: p } = ctx;
  const parity = li.let('slice_parity', uint32, cast(bitAnd(warp.tiles, 1), uint32));
  li.expr(mbarrierWaitParity(target, ctx.sliceEmpty, bitXor(parity, 1)));
  li.if(warp.leader, (x) => {
    x.expr(mbarrierArriveExpectTx(target, ctx.sliceFull, 2 * p.sliceSlabs * FMHA_BWD_SLAB_BYTES));
    for (const [map, base] of [
      [args.qMap, p.offsets.qSlice],
      [args.doMap, p.offsets.doSlice],
    ] as const)
      for (let u = 0; u < p.sliceSlabs; u++)
        x.expr(
          tmaLoad(target, {
            dst: add(smem, base + u * FMHA_BWD_SLAB_BYTES),
            map,
            bar: ctx.sliceFull,
            coords: args.qCoords(mul(add(warp.slabs.slab0, u), FMHA_BWD_SLAB), i0, head),
          }),
        );
  });
  emitFmhaBwdRowStaging(li, args, { lane: warp.lane, i0, head, tileM: p.tileM }, (bb) => fmhaBwdWsSplitDRows(bb, ctx));
  li.expr(mbarrierArrive(target, ctx.sliceFull));
  li.assign(warp.tiles, add(warp.tiles, 1));
}
