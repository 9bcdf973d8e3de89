import {
  add,
  cast,
  clusterSync,
  div,
  exp2Approx,
  fenceProxyAsyncShared,
  float32,
  gt,
  index,
  infinity,
  int32,
  lit,
  lt,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  namedBarrierSync,
  neg,
  or,
  packFloat2,
  pointer,
  setMaxNReg,
  sub,
  uint32,
  eq,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import {
  BlockEmitter,
  clearTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  storeTile,
  sweepTile,
  type DistributedTensor,
} from '@tilekit/tile';
import { makeNaiveTensorDescriptor } from '@tilekit/layout';
import { FMHA_BWD_SLAB, FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
import {
  fmhaBwdWsSplitDColumn0,
  fmhaBwdWsSplitDQueries,
  fmhaBwdWsSplitDQueryTile,
  fmhaBwdWsSplitDRows,
  fmhaBwdWsSplitDStage,
  type FmhaBwdWsSplitDContext,
} from './fmhaBwdWsSplitDContext.ts';
import { emitFmhaBwdWsSplitDExchange, emitFmhaBwdWsSplitDRelease } from './fmhaBwdWsSplitDExchange.ts';

/** What the consumer warpgroups' steps share. */
interface ConsumerState {
  readonly ctx: FmhaBwdWsSplitDContext;
  readonly block: BlockEmitter;
  emitter(bb: BlockBuilder): BlockEmitter;
  readonly sAcc: DistributedTensor;
  readonly dpAcc: DistributedTensor;
  readonly dvAcc: DistributedTensor;
  readonly dkAcc: DistributedTensor;
  readonly dqAcc: DistributedTensor;
  /** `int`: this thread's consumer warpgroup (0 or 1). */
  readonly wg: Expr;
  /** `int`: the CTA's first column. */
  readonly col0: Expr;
  /** Query tiles (slice stages) consumed so far. */
  readonly tiles: Expr;
}

/** One query tile: its iteration, head and first row; its slice stage and that stage's LSE/D rows (`float*`). */
interface QueryTile {
  readonly it: Expr;
  readonly head: Expr;
  readonly i0: Expr;
  readonly stage: Expr;
  readonly rows: Expr;
}

/**
 * The two consumer warpgroups of `FmhaBwdWsSplitDPipeline`: K and V once, every query tile of
 * the block (fmhaBwdWsSplitDQueries), then dK and dV of the block's keys × slice.
 */
export function emitFmhaBwdWsSplitDConsumers(cons: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  const { pipeline: p, target } = ctx;
  cons.comment(`2 consumer warpgroups: registers up to ${p.policy.consumerRegisters}`);
  cons.expr(setMaxNReg(target, 'inc', p.policy.consumerRegisters));
  const st = makeConsumerState(cons, ctx);
  cons.expr(mbarrierWaitParity(target, ctx.kvFull, lit(0, uint32)));
  const q = fmhaBwdWsSplitDQueries(cons, ctx);
  cons.forRange({ name: 'it', to: q.iters }, (li, it) => {
    const { head, i0 } = fmhaBwdWsSplitDQueryTile(li, ctx, q, it);
    const { stage, parity } = fmhaBwdWsSplitDStage(li, ctx, st.tiles);
    const rows = fmhaBwdWsSplitDRows(li, ctx, stage);
    li.expr(mbarrierWaitParity(target, ctx.sliceFull(stage), parity));
    emitQueryTile(li, st, { it, head, i0, stage, rows });
    li.assign(st.tiles, add(st.tiles, 1));
  });
  emitDkDvStores(cons, st, q.iters);
  if (p.exchanges > 0) {
    cons.comment("cluster barrier: every peer is done with this CTA's shared memory");
    cons.expr(clusterSync(target));
  }
}

function makeConsumerState(cons: BlockBuilder, ctx: FmhaBwdWsSplitDContext): ConsumerState {
  const { pipeline: p, target, args } = ctx;
  const index0 = { symbols: args.symbols };
  const block = new BlockEmitter(cons, target, { numThreads: p.consumerThreads, index: index0 });
  const emitter = (bb: BlockBuilder): BlockEmitter => new BlockEmitter(bb, target, { numThreads: p.consumerThreads, index: index0 }, block);
  return {
    ctx,
    block,
    emitter,
    sAcc: makeDistributedTensor(block, 'st_acc', p.sT.cEncoding, float32),
    dpAcc: makeDistributedTensor(block, 'dpt_acc', p.sT.cEncoding, float32),
    dvAcc: makeDistributedTensor(block, 'dv_acc', p.kv.cEncoding, float32),
    dkAcc: makeDistributedTensor(block, 'dk_acc', p.kv.cEncoding, float32),
    dqAcc: makeDistributedTensor(block, 'dq_acc', p.dq.cEncoding, float32),
    wg: cons.let('warpgroup', int32, div(ctx.tid, 128)),
    col0: fmhaBwdWsSplitDColumn0(cons, ctx),
    tiles: cons.declare('slice_loads', int32, 0, { storage: 'mutable' }),
  };
}

/** A shared address `offset` bytes into the dynamic shared memory. */
function at(ctx: FmhaBwdWsSplitDContext, offset: Expr | number): Expr {
  return add(ctx.smemAddr, cast(offset, uint32));
}

/**
 * One query tile (its stage landed): partial Sᵀ and dPᵀ, the exchange, the softmax gradient, Pᵀ and
 * dSᵀ to shared memory, dV and dK, the stage released, dQ into dq_acc, the exchange buffer released.
 */
function emitQueryTile(li: BlockBuilder, st: ConsumerState, q: QueryTile): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  const O = p.offsets;
  const qTile = li.let('q_tile', uint32, at(ctx, add(O.qSlice, mul(q.stage, p.stageBytes))));
  const doTile = li.let('do_tile', uint32, at(ctx, add(O.doSlice, mul(q.stage, p.stageBytes))));
  li.comment('partial Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ over this CTA’s columns (this warpgroup: 32 of the 64 queries)');
  li.comment('slab 0 always (zero-filled past the head dim: a zero partial); later slabs only inside the head dim');
  for (const [acc, aBase, bTile, dim] of [
    [st.sAcc, O.k, qTile, p.policy.headDim],
    [st.dpAcc, O.v, doTile, p.policy.headDimV],
  ] as const)
    for (let u = 0; u < p.sliceSlabs; u++) {
      const mma = (b: BlockBuilder): void =>
        p.sT.emitMma(b, target, acc, {
          aTile: at(ctx, aBase + u * FMHA_BWD_SLAB_BYTES),
          bTile: add(bTile, u * FMHA_BWD_SLAB_BYTES),
          warpgroup: st.wg,
          accumulate: lit(u === 0 ? 0 : 1, int32),
        });
      if (u === 0 || dim % p.policy.sliceWidth === 0) mma(li);
      else li.if(lt(add(st.col0, u * FMHA_BWD_SLAB), dim), mma);
    }
  p.sT.emitWait(li, target, st.sAcc, 0);
  p.sT.emitWait(li, target, st.dpAcc, 0);
  emitFmhaBwdWsSplitDExchange(li, st, st.tiles);
  emitSoftmaxGradient(li, st, q);
  emitPdsStores(li, st);
  const firstIt = li.let('acc_kv', int32, cast(gt(q.it, 0), int32));
  li.comment('dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols] (this warpgroup: 128 of the CTA’s columns, unless all past the head dims)');
  const wgCol = li.let('wg_col0', int32, add(st.col0, mul(st.wg, p.policy.sliceWidth / 2)));
  li.if(lt(wgCol, p.policy.headDim), (kb) => {
    p.kv.emitMma(kb, target, st.dvAcc, { aTile: at(ctx, O.pT), bTile: doTile, warpgroup: st.wg, accumulate: firstIt });
    p.kv.emitMma(kb, target, st.dkAcc, { aTile: at(ctx, O.dsT), bTile: qTile, warpgroup: st.wg, accumulate: firstIt });
    p.kv.emitWait(kb, target, st.dvAcc, 0);
    p.kv.emitWait(kb, target, st.dkAcc, 0);
  });
  li.comment('both warpgroups’ dV/dK GEMMs are done with the stage’s Q and dO: its bytes take dQ next');
  li.expr(namedBarrierSync(target, 3, p.consumerThreads));
  const staging = li.let('dq_stage', pointer(float32), cast(add(ctx.smem, add(O.qSlice, mul(q.stage, p.stageBytes))), pointer(float32)));
  for (let h = 0; h < 2; h++) emitDqHalf(li, st, staging, h);
  li.comment('dQ staged (and the stage’s LSE/D rows read): visible to the dQ warp’s bulk reductions');
  li.expr(fenceProxyAsyncShared(target));
  li.expr(mbarrierArrive(target, ctx.dqStaged(q.stage)));
  emitFmhaBwdWsSplitDRelease(li, ctx);
}

/**
 * dQ[:, half h of the CTA's columns] = dS·K[:, those columns] (64 columns per warpgroup), stored as
 * fp32 into `staging` (row-major, 64 rows of sliceWidth floats); skipped when the half lies past d
 * (the dQ warp reduces only columns inside d).
 */
function emitDqHalf(li: BlockBuilder, st: ConsumerState, staging: Expr, h: number): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  const half = p.policy.sliceWidth / 2;
  li.if(lt(add(st.col0, h * half), p.policy.headDim), (hb) => {
    hb.comment(`dQ of the CTA’s columns [${h * half}, ${(h + 1) * half}), staged for the dQ warp`);
    const kHalf = hb.let('k_half', uint32, at(ctx, p.offsets.k + (h * half * FMHA_BWD_SLAB_BYTES) / 64));
    p.dq.emitMma(hb, target, st.dqAcc, { aTile: at(ctx, p.offsets.dsT), bTile: kHalf, warpgroup: st.wg, accumulate: lit(0, int32) });
    p.dq.emitWait(hb, target, st.dqAcc, 0);
    const inner = st.emitter(hb);
    const view = makeTensorView(
      staging,
      makeNaiveTensorDescriptor([64, p.policy.sliceWidth], [p.policy.sliceWidth, 1], { vectorLength: 2 }),
      {
        elementBytes: 4,
      },
    );
    const window = makeTileWindow(inner, { view, lengths: [64, half], origin: [0, h * half], encoding: p.dq.cEncoding });
    inner.threads((t) => storeTile(t, window, st.dqAcc));
  });
}

/**
 * The mask on edge tiles (and query rows past seqlenQ), Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e) in
 * place of Sᵀ, dSᵀ = scale·Pᵀ∘(dPᵀ − D) in place of dPᵀ.
 */
function emitSoftmaxGradient(li: BlockBuilder, st: ConsumerState, q: QueryTile): void {
  const { ctx } = st;
  const { pipeline: p, args, target } = ctx;
  const { i0 } = q;
  li.comment('the mask on edge tiles; query rows past seqlenQ too');
  li.if(or(args.mask.isEdgeTile(i0, args.n0, p.tileM, p.tileN), gt(add(i0, p.tileM), args.seqlenQ)), (mb) =>
    st
      .emitter(mb)
      .threads((t) =>
        sweepTile(t, st.sAcc, (e) =>
          e.b.if(args.mask.isMaskedNonNegative(add(i0, e.x[1]!), add(args.n0, e.x[0]!)), (z) =>
            z.assign(e.value, infinity(float32, { negative: true })),
          ),
        ),
      ),
  );
  st.emitter(li).threads((t) => {
    t.b.comment('Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e) (a fully masked row: 0); dSᵀ = scale·Pᵀ∘(dPᵀ − D)');
    sweepTile(t, st.sAcc, (e) => e.b.assign(e.value, exp2Approx(target, add(mul(e.value, args.scaleLog2), neg(index(q.rows, e.x[1]!))))));
    sweepTile(t, st.dpAcc, (e) =>
      e.b.assign(e.value, mul(mul(st.sAcc.at(t, e.d), sub(e.value, index(q.rows, add(e.x[1]!, p.tileM)))), args.scale)),
    );
  });
}

/**
 * Pᵀ and dSᵀ as fp16/bf16 pairs into their shared tiles (key rows of 64 query columns, 128B
 * swizzled: the K-major A of dV and dK, and dS's query-major A of dQ) once both warpgroups' previous
 * GEMMs are done with them; visible to the async proxy and both warpgroups after.
 */
function emitPdsStores(li: BlockBuilder, st: ConsumerState): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  li.expr(namedBarrierSync(target, 1, p.consumerThreads));
  const layout = p.kv.aLayout;
  const pWords = li.let('pt_words', pointer(uint32), cast(add(ctx.smem, p.offsets.pT), pointer(uint32)));
  const dsWords = li.let('dst_words', pointer(uint32), cast(add(ctx.smem, p.offsets.dsT), pointer(uint32)));
  st.emitter(li).threads((t) =>
    sweepTile(t, st.sAcc, (e) => {
      // Elements d, d + 1 (d even) are adjacent queries of one key row: one 32-bit word each.
      if (e.d % 2 !== 0) return;
      const { offset } = emitCalculateOffset(e.b, layout.descriptor, [e.x[0]!, e.x[1]!], st.block.indexEmitter);
      const word = e.b.let('pds_word', int32, div(offset, 2));
      e.b.assign(index(pWords, word), packFloat2(target, p.policy.dtype, e.value, st.sAcc.at(t, e.d + 1)));
      e.b.assign(index(dsWords, word), packFloat2(target, p.policy.dtype, st.dpAcc.at(t, e.d), st.dpAcc.at(t, e.d + 1)));
    }),
  );
  li.expr(fenceProxyAsyncShared(target));
  li.expr(namedBarrierSync(target, 2, p.consumerThreads));
}

/** dK and dV of the block's keys × slice (zero when no query tile met them), predicated on rows and head dims. */
function emitDkDvStores(cons: BlockBuilder, st: ConsumerState, iters: Expr): void {
  const { ctx } = st;
  const { pipeline: p, args } = ctx;
  cons.comment('dK and dV of the block’s keys × slice (zero when no query tile met them)');
  cons.if(eq(iters, 0), (z) =>
    st.emitter(z).threads((t) => {
      clearTile(t, st.dkAcc);
      clearTile(t, st.dvAcc);
    }),
  );
  const inner = st.emitter(cons);
  const col0 = st.col0;
  const window = (view: typeof args.dk) =>
    makeTileWindow(inner, {
      view,
      lengths: [p.tileN, p.policy.sliceWidth],
      origin: [args.n0, col0],
      encoding: p.kv.cEncoding,
      originAlignment: [p.tileN, p.policy.sliceWidth],
    });
  const dkWindow = window(args.dk);
  const dvWindow = window(args.dv);
  inner.threads((t) => {
    storeTile(t, dkWindow, st.dkAcc);
    storeTile(t, dvWindow, st.dvAcc);
  });
}
