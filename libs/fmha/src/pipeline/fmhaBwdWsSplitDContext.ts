import {
  add,
  bitAnd,
  cast,
  div,
  float32,
  int32,
  lt,
  maxOf,
  minOf,
  mul,
  pointer,
  select,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import type { FmhaBwdWsSplitDArgs, FmhaBwdWsSplitDPipeline } from './fmhaBwdWsSplitDPipeline.ts';

/** What {@link FmhaBwdWsSplitDPipeline.emit} hands its producer and consumer roles. */
export interface FmhaBwdWsSplitDContext {
  readonly pipeline: FmhaBwdWsSplitDPipeline;
  readonly target: Target;
  readonly args: FmhaBwdWsSplitDArgs;
  /** `uint8_t*` of the dynamic shared memory and its shared-space address. */
  readonly smem: Expr;
  readonly smemAddr: Expr;
  readonly tid: Expr;
  /** K/V landed (once per block). */
  readonly kvFull: Expr;
  /** The query tile's slice slabs and LSE/D rows landed / released. */
  readonly sliceFull: Expr;
  readonly sliceEmpty: Expr;
  /** Ring slot `s` landed / released. */
  ringFull(s: Expr): Expr;
  ringEmpty(s: Expr): Expr;
}

/**
 * The block's slabs (64 columns each): the slice's first slab, how many of the slice's slabs lie
 * inside d (Q, K) and d_v (dO, V), and how many slabs outside the slice stream through the ring per
 * query tile (Q's first, then dO's).
 */
export interface FmhaBwdWsSplitDSlabs {
  readonly slab0: Expr;
  readonly qSlice: Expr;
  readonly vSlice: Expr;
  readonly qRing: Expr;
  readonly vRing: Expr;
}

/** The block's slab counts (both roles compute the same). */
export function fmhaBwdWsSplitDSlabs(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): FmhaBwdWsSplitDSlabs {
  const p = ctx.pipeline;
  const slab0 = b.let('slab0', int32, mul(ctx.args.slice, p.sliceSlabs));
  const inside = (name: string, slabs: number): Expr => b.let(name, int32, maxOf(minOf(sub(slabs, slab0), p.sliceSlabs), 0));
  const qSlice = inside('q_slice_slabs', p.qkSlabs);
  const vSlice = inside('v_slice_slabs', p.vSlabs);
  return {
    slab0,
    qSlice,
    vSlice,
    qRing: b.let('q_ring_slabs', int32, sub(p.qkSlabs, qSlice)),
    vRing: b.let('v_ring_slabs', int32, sub(p.vSlabs, vSlice)),
  };
}

/**
 * The head-dim slab of ring slab `j` of one operand whose slice starts at slab `slab0` and has
 * `inSlice` slabs inside the head dim: the slabs before the slice, then those after it.
 */
export function splitDBwdRingSlabOf(j: number, slab0: number, inSlice: number): number {
  return j < slab0 ? j : j + inSlice;
}

/** {@link splitDBwdRingSlabOf}, emitted. */
export function fmhaBwdWsSplitDRingSlab(b: BlockBuilder, j: Expr, slab0: Expr, inSlice: Expr): Expr {
  return b.let('ring_slab', int32, select(lt(j, slab0), j, add(j, inSlice)));
}

/** Ring slot and barrier parity of ring load number `count`. */
export function fmhaBwdWsSplitDRingSlot(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, count: Expr): { slot: Expr; parity: Expr } {
  const R = ctx.pipeline.policy.ringSlabs;
  return {
    slot: b.let('ring_slot', int32, sub(count, mul(div(count, R), R))),
    parity: b.let('ring_parity', uint32, cast(bitAnd(div(count, R), 1), uint32)),
  };
}

/** The query tiles the block's keys meet, for every query head of the group: iterations it = g·nq + t. */
export interface FmhaBwdWsSplitDQueries {
  readonly start: Expr;
  readonly nq: Expr;
  readonly iters: Expr;
}

export function fmhaBwdWsSplitDQueries(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): FmhaBwdWsSplitDQueries {
  const { pipeline: p, args } = ctx;
  const r = args.mask.getTileRangeAlongY(args.n0, p.tileN, p.tileM);
  const start = b.let('q_start', int32, r.start);
  const nq = b.let('q_tiles', int32, div(sub(r.end, start), p.tileM));
  return { start, nq, iters: b.let('q_iters', int32, mul(nq, args.headRatio)) };
}

/** Iteration `it`: its query head and first query row. */
export function fmhaBwdWsSplitDQueryTile(
  b: BlockBuilder,
  ctx: FmhaBwdWsSplitDContext,
  q: FmhaBwdWsSplitDQueries,
  it: Expr,
): { head: Expr; i0: Expr } {
  const g = b.let('g', int32, div(it, q.nq));
  return {
    head: b.let('q_head', int32, add(ctx.args.firstHead, g)),
    i0: b.let('i0', int32, add(q.start, mul(sub(it, mul(g, q.nq)), ctx.pipeline.tileM))),
  };
}

/** `float*` of the staged LSE·log2 e rows (D's follow at +64). */
export function fmhaBwdWsSplitDRows(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): Expr {
  return b.let('row_stage', pointer(float32), cast(add(ctx.smem, ctx.pipeline.offsets.rows), pointer(float32)));
}
