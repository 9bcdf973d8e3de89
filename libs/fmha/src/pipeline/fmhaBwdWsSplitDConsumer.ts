import {
  add,
  and,
  bitAnd,
  cast,
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
  reduceAddF32,
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
  makeTileWindow,
  storeTile,
  sweepTile,
  type DistributedTensor,
} from '@tilekit/tile';
import { FMHA_BWD_SLAB, FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
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
  readonly slabs: FmhaBwdWsSplitDSlabs;
  /** Ring loads and slices consumed so far. */
  readonly loads: Expr;
  readonly tiles: Expr;
  /** `float*` of the staged LSE·log2 e rows (D at +64). */
  readonly rows: Expr;
}

/** One query tile: its head, first row, the slice stage's parity. */
interface QueryTile {
  readonly it: Expr;
  readonly head: Expr;
  readonly i0: Expr;
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
    emitQueryTile(li, st, { it, head, i0 });
  });
  emitDkDvStores(cons, st, q.iters);
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
    slabs: fmhaBwdWsSplitDSlabs(cons, ctx),
    loads: cons.declare('ring_loads', int32, 0, { storage: 'mutable' }),
    tiles: cons.declare('slice_loads', int32, 0, { storage: 'mutable' }),
    rows: fmhaBwdWsSplitDRows(cons, ctx),
  };
}

/** A shared address `offset` bytes into the dynamic shared memory. */
function at(ctx: FmhaBwdWsSplitDContext, offset: Expr | number): Expr {
  return add(ctx.smemAddr, cast(offset, uint32));
}

/** One query tile: Sᵀ and dPᵀ, the softmax gradient, Pᵀ and dSᵀ to shared memory, dV/dK/dQ, dQ into dq_acc. */
function emitQueryTile(li: BlockBuilder, st: ConsumerState, q: QueryTile): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  const O = p.offsets;
  emitScores(li, st);
  p.sT.emitWait(li, target, st.sAcc, 0);
  p.sT.emitWait(li, target, st.dpAcc, 0);
  emitSoftmaxGradient(li, st, q);
  emitPdsStores(li, st);
  const firstIt = li.let('acc_kv', int32, cast(gt(q.it, 0), int32));
  li.comment('dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols] (this warpgroup: 128 of the slice’s columns, unless all past the head dims)');
  const wgCol = li.let('wg_col0', int32, add(mul(st.slabs.slab0, FMHA_BWD_SLAB), mul(st.wg, p.policy.sliceWidth / 2)));
  li.if(lt(wgCol, p.policy.headDim), (kb) => {
    p.kv.emitMma(kb, target, st.dvAcc, { aTile: at(ctx, O.pT), bTile: at(ctx, O.doSlice), warpgroup: st.wg, accumulate: firstIt });
    p.kv.emitMma(kb, target, st.dkAcc, { aTile: at(ctx, O.dsT), bTile: at(ctx, O.qSlice), warpgroup: st.wg, accumulate: firstIt });
    p.kv.emitWait(kb, target, st.dvAcc, 0);
    p.kv.emitWait(kb, target, st.dkAcc, 0);
  });
  li.comment('the slice stage (Q, dO slabs, LSE/D rows) released: this thread read it');
  li.expr(mbarrierArrive(target, ctx.sliceEmpty));
  for (let h = 0; h < 2; h++) emitDqHalf(li, st, q, h);
}

/**
 * dQ[:, half h of the slice] = dS·K[:, those columns] (64 columns per warpgroup), added into dq_acc
 * with red.global (rows inside the sequence, columns inside d); skipped when the half lies past d.
 */
function emitDqHalf(li: BlockBuilder, st: ConsumerState, q: QueryTile, h: number): void {
  const { ctx } = st;
  const { pipeline: p, args, target } = ctx;
  const half = p.policy.sliceWidth / 2;
  const col0 = li.let('dq_col0', int32, add(mul(st.slabs.slab0, FMHA_BWD_SLAB), h * half));
  li.if(lt(col0, p.policy.headDim), (hb) => {
    hb.comment(`dQ of the slice’s columns [${h * half}, ${(h + 1) * half}) into dq_acc (red.global.add.f32)`);
    const kHalf = hb.let(
      'k_half',
      uint32,
      at(ctx, add(p.offsets.k, mul(add(st.slabs.slab0, (h * half) / FMHA_BWD_SLAB), FMHA_BWD_SLAB_BYTES))),
    );
    p.dq.emitMma(hb, target, st.dqAcc, { aTile: at(ctx, p.offsets.dsT), bTile: kHalf, warpgroup: st.wg, accumulate: lit(0, int32) });
    p.dq.emitWait(hb, target, st.dqAcc, 0);
    const dqRow = args.dqRow(hb, q.head);
    st.emitter(hb).threads((t) =>
      sweepTile(t, st.dqAcc, (e) => {
        const row = e.b.let('dq_row', int32, add(q.i0, e.x[0]!));
        const col = e.b.let('dq_col', int32, add(col0, e.x[1]!));
        e.b.if(and(lt(row, args.seqlenQ), lt(col, p.policy.headDim)), (s) =>
          s.expr(reduceAddF32(target, add(dqRow, add(mul(row, p.policy.headDim), col)), e.value)),
        );
      }),
    );
  });
}

/** Slabs of the slice inside d and d_v (compile-time: the pipeline emits one body per distinct pair). */
interface SliceSlabs {
  readonly q: number;
  readonly v: number;
}

/**
 * Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ (each over its ring slabs, then the slice's), with the slab counts
 * known at compile time: one body per distinct (Q, dO) slice-slab pair over the problem's slices
 * (d a multiple of the slice width: one body), chosen by the block's slice. Runtime trip counts
 * would leave ptxas a zero-trip path that moves the accumulators outside wgmma (C7515).
 */
function emitScores(li: BlockBuilder, st: ConsumerState): void {
  const p = st.ctx.pipeline;
  const inside = (slabs: number, s: number): number => Math.max(Math.min(slabs - s * p.sliceSlabs, p.sliceSlabs), 0);
  const groups = new Map<string, { readonly slabs: SliceSlabs; readonly slices: number[] }>();
  for (let s = 0; s < p.slices; s++) {
    const slabs = { q: inside(p.qkSlabs, s), v: inside(p.vSlabs, s) };
    const key = `${slabs.q},${slabs.v}`;
    const g = groups.get(key) ?? { slabs, slices: [] };
    g.slices.push(s);
    groups.set(key, g);
  }
  const list = [...groups.values()];
  const emitFrom = (b: BlockBuilder, i: number): void => {
    const g = list[i]!;
    if (i === list.length - 1) return emitScoresFor(b, st, g.slabs);
    const isG = g.slices.map((s) => eq(st.ctx.args.slice, s)).reduce((x, y) => or(x, y));
    b.if(
      isG,
      (t) => emitScoresFor(t, st, g.slabs),
      (e) => emitFrom(e, i + 1),
    );
  };
  emitFrom(li, 0);
}

function emitScoresFor(b: BlockBuilder, st: ConsumerState, slabs: SliceSlabs): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  const O = p.offsets;
  const qRing = p.qkSlabs - slabs.q;
  const vRing = p.vSlabs - slabs.v;
  b.comment(`Sᵀ = K·Qᵀ over d: ${qRing} ring slabs, then the slice’s ${slabs.q} (this warpgroup: 32 of the 64 queries)`);
  emitRingPart(b, st, { acc: st.sAcc, aBase: O.k, count: qRing, inSlice: slabs.q });
  const parity = b.let('slice_parity', uint32, cast(bitAnd(st.tiles, 1), uint32));
  b.expr(mbarrierWaitParity(target, ctx.sliceFull, parity));
  b.assign(st.tiles, add(st.tiles, 1));
  emitSlicePart(b, st, { acc: st.sAcc, aBase: O.k, bBase: O.qSlice, count: slabs.q, ring: qRing });
  b.comment(`dPᵀ = V·dOᵀ over d_v: ${vRing} ring slabs, then the slice’s ${slabs.v}`);
  emitRingPart(b, st, { acc: st.dpAcc, aBase: O.v, count: vRing, inSlice: slabs.v });
  emitSlicePart(b, st, { acc: st.dpAcc, aBase: O.v, bBase: O.doSlice, count: slabs.v, ring: vRing });
}

/**
 * acc (+)= A·B over `count` ring slabs (A: the resident K or V slab of the ring slab's columns):
 * each slab's wgmma issued once it landed; the previous slab's slot released as soon as its wgmma
 * completed (at most one in flight behind the newest), the last one's after the loop.
 */
function emitRingPart(
  b: BlockBuilder,
  st: ConsumerState,
  op: { readonly acc: DistributedTensor; readonly aBase: number; readonly count: number; readonly inSlice: number },
): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  if (op.count === 0) return;
  const prev = b.declare('prev_slot', int32, 0, { storage: 'mutable' });
  b.forRange({ name: 'j', to: op.count }, (lj, j) => {
    const { slot, parity } = fmhaBwdWsSplitDRingSlot(lj, ctx, st.loads);
    const c = fmhaBwdWsSplitDRingSlab(lj, j, st.slabs.slab0, lit(op.inSlice, int32));
    lj.expr(mbarrierWaitParity(target, ctx.ringFull(slot), parity));
    p.sT.emitMma(lj, target, op.acc, {
      aTile: at(ctx, add(op.aBase, mul(c, FMHA_BWD_SLAB_BYTES))),
      bTile: at(ctx, add(p.offsets.ring, mul(slot, FMHA_BWD_SLAB_BYTES))),
      warpgroup: st.wg,
      accumulate: cast(gt(j, 0), int32),
    });
    lj.if(gt(j, 0), (w) => {
      p.sT.emitWait(w, target, op.acc, 1);
      w.expr(mbarrierArrive(target, ctx.ringEmpty(prev)));
    });
    lj.assign(prev, slot);
    lj.assign(st.loads, add(st.loads, 1));
  });
  p.sT.emitWait(b, target, op.acc, 0);
  b.expr(mbarrierArrive(target, ctx.ringEmpty(prev)));
}

/** acc (+)= A·B over the slice's `count` slabs inside the head dim (after `ring` ring slabs), unrolled. */
function emitSlicePart(
  b: BlockBuilder,
  st: ConsumerState,
  op: { readonly acc: DistributedTensor; readonly aBase: number; readonly bBase: number; readonly count: number; readonly ring: number },
): void {
  const { ctx } = st;
  const { pipeline: p, target } = ctx;
  for (let u = 0; u < op.count; u++)
    p.sT.emitMma(b, target, op.acc, {
      aTile: at(ctx, add(op.aBase, mul(add(st.slabs.slab0, u), FMHA_BWD_SLAB_BYTES))),
      bTile: at(ctx, op.bBase + u * FMHA_BWD_SLAB_BYTES),
      warpgroup: st.wg,
      accumulate: lit(op.ring + u > 0 ? 1 : 0, int32),
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
    sweepTile(t, st.sAcc, (e) => e.b.assign(e.value, exp2Approx(target, add(mul(e.value, args.scaleLog2), neg(index(st.rows, e.x[1]!))))));
    sweepTile(t, st.dpAcc, (e) =>
      e.b.assign(e.value, mul(mul(st.sAcc.at(t, e.d), sub(e.value, index(st.rows, add(e.x[1]!, p.tileM)))), args.scale)),
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
  const col0 = cons.let('kv_col0', int32, mul(st.slabs.slab0, FMHA_BWD_SLAB));
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
