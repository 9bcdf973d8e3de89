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
  /** `int`: the CTA's rank in its cluster = its column slice. */
  readonly rank: Expr;
  /** K/V landed (once per CTA). */
  readonly kvFull: Expr;
  /** Slice stage `s` (the query tile's Q and dO slabs, LSE/D rows) landed / released. */
  sliceFull(s: Expr): Expr;
  sliceEmpty(s: Expr): Expr;
  /** Slice stage `s` holds the query tile's dQ (fp32 rows over the stage's Q/dO slabs), staged by every consumer thread. */
  dqStaged(s: Expr): Expr;
  /** Exchange step `k`: the peer's partials landed in this CTA's buffer / the peer's buffer is free for this CTA's. */
  xFull(k: Expr): Expr;
  xEmpty(k: Expr): Expr;
}

/** Stage and barrier parity of slice load number `count`. */
export function fmhaBwdWsSplitDStage(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, count: Expr): { stage: Expr; parity: Expr } {
  const S = ctx.pipeline.policy.sliceStages;
  return {
    stage: b.let('stage', int32, S === 1 ? 0 : bitAnd(count, 1)),
    parity: b.let('stage_parity', uint32, cast(bitAnd(S === 1 ? count : div(count, 2), 1), uint32)),
  };
}

/** The CTA's first column (of K, V, Q, dO and the outputs): rank · sliceWidth. */
export function fmhaBwdWsSplitDColumn0(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): Expr {
  return b.let('col0', int32, mul(ctx.rank, ctx.pipeline.policy.sliceWidth));
}

/** The query tiles the CTA's keys meet, for every query head of the group: iterations it = g·nq + t. */
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

/** `float*` of stage `stage`'s LSE·log2 e rows (D's follow at +64). */
export function fmhaBwdWsSplitDRows(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, stage: Expr): Expr {
  return b.let(
    'row_stage',
    pointer(float32),
    cast(add(ctx.smem, add(ctx.pipeline.offsets.rows, mul(stage, 2 * 64 * 4))), pointer(float32)),
  );
}
