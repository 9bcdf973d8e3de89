import {
  add,
  bitAnd,
  cast,
  div,
  float32,
  int32,
  mul,
  pointer,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import type { FmhaBwdWsArgs, FmhaBwdWsPipeline } from './fmhaBwdWsPipeline.ts';

/** Head-dim elements of one TMA box / wgmma slab (one 128-byte swizzled row of fp16/bf16). */
export const FMHA_BWD_SLAB = 64;
/** Bytes of one 64-row slab. */
export const FMHA_BWD_SLAB_BYTES = 64 * 128;

/**
 * What {@link FmhaBwdWsPipeline.emit} hands the producer and consumer roles: the pipeline, the
 * kernel's arguments, the dynamic shared memory, the barriers and the block's key-tile count.
 */
export interface FmhaBwdWsContext {
  readonly pipeline: FmhaBwdWsPipeline;
  readonly target: Target;
  readonly args: FmhaBwdWsArgs;
  /** `uint8_t*` of the dynamic shared memory and its shared-space address. */
  readonly smem: Expr;
  readonly smemAddr: Expr;
  /** K/V stage barriers (full: TMA landed; empty: consumers released it). */
  readonly kvFull: Expr;
  readonly kvEmpty: Expr;
  /** Q/dO/LSE/D stage `s` barriers. */
  qFull(s: Expr | number): Expr;
  qEmpty(s: Expr | number): Expr;
  readonly tid: Expr;
  /** Rounds of this block's key tiles kt = first + round·step < count. */
  readonly keyRounds: Expr;
}

/** A query-tile iteration of a key tile: `start` (first query row), `nq` (tiles per head), `iters` (nq · heads). */
export interface FmhaBwdQueryRange {
  readonly start: Expr;
  readonly iters: Expr;
  readonly nq: Expr;
}

/** The key tile of round `round`: `kt` and its first key row `j0`. */
export function fmhaBwdKeyTile(bb: BlockBuilder, ctx: FmhaBwdWsContext, round: Expr): { kt: Expr; j0: Expr } {
  const kt = bb.let('kt', int32, add(ctx.args.keyTiles.first, mul(round, ctx.args.keyTiles.step)));
  return { kt, j0: bb.let('j0', int32, mul(kt, ctx.pipeline.policy.tileN)) };
}

/** The query tiles of one key tile, for every query head of the group: iterations it = g·nq + t. */
export function fmhaBwdQueryRange(bb: BlockBuilder, ctx: FmhaBwdWsContext, j0: Expr): FmhaBwdQueryRange {
  const P = ctx.pipeline.policy;
  const r = ctx.args.mask.getTileRangeAlongY(j0, P.tileN, P.tileM);
  const start = bb.let('q_start', int32, r.start);
  const nq = bb.let('q_tiles', int32, div(sub(r.end, start), P.tileM));
  return { start, nq, iters: bb.let('q_iters', int32, mul(nq, ctx.args.headRatio)) };
}

/** The ring stage of load number `count` of `n` stages, and its barrier parity. */
export function fmhaBwdStageOf(bb: BlockBuilder, count: Expr, n: number): { s: Expr; parity: Expr } {
  return {
    s: bb.let('s', int32, n === 2 ? bitAnd(count, 1) : sub(count, mul(div(count, n), n))),
    parity: bb.let('parity', uint32, cast(bitAnd(div(count, n), 1), uint32)),
  };
}

/** Iteration `it` of a key tile's query range: its query head and first query row. */
export function fmhaBwdQueryIteration(
  bb: BlockBuilder,
  ctx: FmhaBwdWsContext,
  it: Expr,
  range: FmhaBwdQueryRange,
): { head: Expr; i0: Expr } {
  const { nq, start } = range;
  const g = bb.let('g', int32, div(it, nq));
  return {
    head: bb.let('q_head', int32, add(ctx.args.firstHead, g)),
    i0: bb.let('i0', int32, add(start, mul(sub(it, mul(g, nq)), ctx.pipeline.policy.tileM))),
  };
}

/** The `float*` of stage `s`'s LSE·log2 e rows in shared memory (its D rows follow at `tileM`). */
export function fmhaBwdRowStage(bb: BlockBuilder, ctx: FmhaBwdWsContext, s: Expr): Expr {
  const p = ctx.pipeline;
  return bb.let('lse_stage', pointer(float32), cast(add(ctx.smem, add(p.offsets.lse, mul(s, 2 * p.rowStageBytes))), pointer(float32)));
}
