import {
  add,
  bitAnd,
  bitXor,
  bool,
  cast,
  eq,
  float32,
  index,
  infinity,
  int32,
  lit,
  lt,
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierWaitParity,
  mul,
  pointer,
  prefetchTensorMap,
  select,
  setMaxNReg,
  sub,
  tmaLoad,
  uint8,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import {
  FMHA_BWD_SLAB,
  FMHA_BWD_SLAB_BYTES,
  fmhaBwdKeyTile,
  fmhaBwdQueryIteration,
  fmhaBwdQueryRange,
  fmhaBwdRowStage,
  fmhaBwdStageOf,
  type FmhaBwdQueryRange,
  type FmhaBwdWsContext,
} from './fmhaBwdWsContext.ts';
import type { FmhaBwdWsArgs } from './fmhaBwdWsPipeline.ts';

/** The first producer warp's values: its lane, the TMA lane's predicate and the ring's counters. */
interface ProducerWarp {
  readonly lane: Expr;
  readonly leader: Expr;
  /** Q/dO stages loaded so far, key tiles loaded so far. */
  readonly done: Expr;
  readonly tiles: Expr;
}

/**
 * The producer warpgroup of `FmhaBwdWsPipeline` (fmhaBwdWsPipeline.ts): registers down to `producerRegisters`; its
 * first warp streams K and V per key tile and Q, dO, LSE and D per query tile through the ring.
 */
export function emitFmhaBwdWsProducer(prod: BlockBuilder, ctx: FmhaBwdWsContext): void {
  const { pipeline: p, target, args, tid } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; one thread issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
  prod.if(lt(tid, p.consumerThreads + 32), (one) => {
    prod.comment('the first producer warp: lane 0 issues every TMA load; all lanes stage LSE·log2 e and D rows in shared memory');
    const lane = one.let('lane', int32, sub(tid, p.consumerThreads));
    const leader = one.let('tma_lane', bool, eq(lane, 0));
    one.if(leader, (x) => {
      for (const map of [args.qMap, args.kMap, args.vMap, args.doMap]) x.expr(prefetchTensorMap(target, map));
    });
    const done = one.declare('q_loads', int32, 0, { storage: 'mutable' });
    const tiles = one.declare('kv_round', int32, 0, { storage: 'mutable' });
    const warp: ProducerWarp = { lane, leader, done, tiles };
    one.forRange({ name: 'round', to: ctx.keyRounds }, (l, round) => emitProducerRound(l, ctx, warp, round));
  });
}

/** One key tile: its K and V, then every query tile that sees it. */
function emitProducerRound(l: BlockBuilder, ctx: FmhaBwdWsContext, warp: ProducerWarp, round: Expr): void {
  const { j0 } = fmhaBwdKeyTile(l, ctx, round);
  l.if(warp.leader, (x) => emitKeyValueLoads(x, ctx, warp.tiles, j0));
  l.assign(warp.tiles, add(warp.tiles, 1));
  const range = fmhaBwdQueryRange(l, ctx, j0);
  l.forRange({ name: 'it', to: range.iters }, (li, it) => emitProducerQueryTile(li, ctx, warp, it, range));
}

/** The TMA lane: K and V of key rows j0 … (after the consumers released the previous ones), in 64-row chunks. */
function emitKeyValueLoads(x: BlockBuilder, ctx: FmhaBwdWsContext, tiles: Expr, j0: Expr): void {
  const { pipeline: p, target, args, kvFull } = ctx;
  const O = p.offsets;
  x.comment('K and V of this key tile (after the consumers released the previous ones)');
  x.expr(mbarrierWaitParity(target, ctx.kvEmpty, bitXor(cast(bitAnd(tiles, 1), uint32), 1)));
  x.expr(mbarrierArriveExpectTx(target, kvFull, p.kBytes + p.vBytes));
  for (let c = 0; c < p.chunks; c++) {
    emitChunkSlabLoads(x, ctx, args.kMap, O.k, p.slabsQK, c, j0);
    emitChunkSlabLoads(x, ctx, args.vMap, O.v, p.slabsV, c, j0);
  }
}

/** Chunk c (key rows j0 + 64c …) of K or V: its `slabs` 64-column slabs by TMA, from shared offset `base`. */
function emitChunkSlabLoads(x: BlockBuilder, ctx: FmhaBwdWsContext, map: Expr, base: number, slabs: number, c: number, j0: Expr): void {
  const { target, args, smem, kvFull } = ctx;
  for (let sl = 0; sl < slabs; sl++)
    x.expr(
      tmaLoad(target, {
        dst: add(smem, base + (c * slabs + sl) * FMHA_BWD_SLAB_BYTES),
        map,
        bar: kvFull,
        coords: args.kvCoords(sl * FMHA_BWD_SLAB, add(j0, 64 * c)),
      }),
    );
}

/** One query tile into the next ring stage: Q and dO by TMA, LSE and D rows by the warp's lanes. */
function emitProducerQueryTile(li: BlockBuilder, ctx: FmhaBwdWsContext, warp: ProducerWarp, it: Expr, range: FmhaBwdQueryRange): void {
  const { target } = ctx;
  const { s, parity } = fmhaBwdStageOf(li, warp.done, ctx.pipeline.policy.stages);
  const { head, i0 } = fmhaBwdQueryIteration(li, ctx, it, range);
  li.expr(mbarrierWaitParity(target, ctx.qEmpty(s), bitXor(parity, 1)));
  li.if(warp.leader, (x) => emitQueryLoads(x, ctx, s, i0, head));
  emitFmhaBwdRowStaging(li, ctx.args, { lane: warp.lane, i0, head, tileM: ctx.pipeline.policy.tileM }, (bb) => fmhaBwdRowStage(bb, ctx, s));
  li.expr(mbarrierArrive(target, ctx.qFull(s)));
  li.assign(warp.done, add(warp.done, 1));
}

/** The TMA lane: the Q and dO boxes of query rows i0 … of `head` into stage `s`. */
function emitQueryLoads(x: BlockBuilder, ctx: FmhaBwdWsContext, s: Expr, i0: Expr, head: Expr): void {
  const { pipeline: p, target, args, smem } = ctx;
  const O = p.offsets;
  const tileM = p.policy.tileM;
  x.expr(mbarrierArriveExpectTx(target, ctx.qFull(s), p.qStageBytes + p.doStageBytes));
  const qStage = x.let('q_stage', pointer(uint8), add(smem, add(O.q, mul(s, p.qStageBytes))));
  const doStage = x.let('do_stage', pointer(uint8), add(smem, add(O.dO, mul(s, p.doStageBytes))));
  for (let c = 0; c < p.slabsQK; c++)
    x.expr(
      tmaLoad(target, {
        dst: add(qStage, c * tileM * 128),
        map: args.qMap,
        bar: ctx.qFull(s),
        coords: args.qCoords(c * FMHA_BWD_SLAB, i0, head),
      }),
    );
  for (let c = 0; c < p.slabsV; c++)
    x.expr(
      tmaLoad(target, {
        dst: add(doStage, c * tileM * 128),
        map: args.doMap,
        bar: ctx.qFull(s),
        coords: args.qCoords(c * FMHA_BWD_SLAB, i0, head),
      }),
    );
}

/**
 * LSE (as LSE·log2 e; +∞ for a fully masked row, so its P is 0) and D of a query tile's `tileM`
 * rows into the stage `stage` returns (`float*`: LSE rows, then D rows), one row per lane of the
 * calling warp per 32: loaded by the producer so their global latency hides behind the ring.
 */
export function emitFmhaBwdRowStaging(
  li: BlockBuilder,
  args: Pick<FmhaBwdWsArgs, 'lseRow' | 'dRow' | 'seqlenQ'>,
  at: { readonly lane: Expr; readonly i0: Expr; readonly head: Expr; readonly tileM: number },
  stage: (li: BlockBuilder) => Expr,
): void {
  const { lane, i0, head, tileM } = at;
  const lseRow = args.lseRow(li, head);
  const dRow = args.dRow(li, head);
  const lseStage = stage(li);
  for (let k = 0; k < tileM / 32; k++) {
    const r = li.let('stage_r', int32, add(lane, 32 * k));
    const row = li.let('stage_row', int32, add(i0, r));
    const inSeq = li.let('in_seq', bool, lt(row, args.seqlenQ));
    const lse = li.let('lse', float32, select(inSeq, index(lseRow, row), lit(0, float32)));
    li.assign(
      index(lseStage, r),
      select(eq(lse, infinity(float32, { negative: true })), infinity(float32), mul(lse, lit(Math.LOG2E, float32))),
    );
    li.assign(index(lseStage, add(r, tileM)), select(inSeq, index(dRow, row), lit(0, float32)));
  }
}
