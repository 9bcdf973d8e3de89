// How the backward's dQ partials (FmhaBwdWsPipeline: dQ = dS·K per query tile) reach the
// workspace's dq_acc: red.global per element at head dim 256; otherwise staged in shared memory as a
// row-major fp32 tile and moved by one TMA bulk reduce-add (atomic) or bulk store / reduce-add in a
// fixed order (split: deterministic).
import {
  add,
  and,
  bitAnd,
  bool,
  bulkCommitGroup,
  bulkReduceAddF32,
  bulkStoreF32,
  bulkWaitGroup,
  cast,
  eq,
  fenceProxyAsyncShared,
  float32,
  gt,
  index,
  int32,
  lt,
  minOf,
  mul,
  namedBarrierSync,
  pointer,
  reduceAddF32,
  sub,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { sweepTile, type BlockEmitter } from '@tilekit/tile';
import type { FmhaBwdWsContext } from './fmhaBwdWsContext.ts';
import type { FmhaBwdWsConsumerState, FmhaBwdWsKeyTile, FmhaBwdWsQueryTile } from './fmhaBwdWsConsumerState.ts';

/** The staged dQ tile of a query tile: the issuing thread's predicate and the `float*` buffer. */
interface DqStaging {
  readonly atomic: boolean;
  readonly issuer: Expr;
  readonly buffer: Expr;
}

/**
 * Adds a query tile's dQ (in `dqAcc`, both warpgroups waited for) into dq_acc of its query head per
 * the pipeline's `dqMode`. `inner` is the query tile's block emitter.
 */
export function emitFmhaBwdDqAccumulation(
  li: BlockBuilder,
  inner: BlockEmitter,
  st: FmhaBwdWsConsumerState,
  key: FmhaBwdWsKeyTile,
  q: FmhaBwdWsQueryTile,
): void {
  const dqRow = st.ctx.args.dqAcc(li, q.head);
  if (st.ctx.pipeline.wide) {
    emitDqReduceGlobal(li, inner, st, q, dqRow);
    return;
  }
  // dQ into dq_acc by the TMA unit: the tile (row-major fp32) goes to shared memory, then an
  // issuing thread moves the rows inside the sequence with one bulk operation. atomic: a
  // reduce-add per key-split replica (two buffers with a key split). split (deterministic):
  // one buffer (a key split's second partial added in shared memory first, in a fixed
  // order), stored by the block's first key tile and reduce-added by later ones, each key
  // tile's operations complete before the next tile's start (see the end of the round).
  const staging = emitDqStaging(li, inner, st);
  emitDqBulk(li, st, key, q, dqRow, staging);
}

/** Head dim 256: each warpgroup adds its half of the dQ columns, element by element, with red.global. */
function emitDqReduceGlobal(li: BlockBuilder, inner: BlockEmitter, st: FmhaBwdWsConsumerState, q: FmhaBwdWsQueryTile, dqRow: Expr): void {
  const { target, args, pipeline: p } = st.ctx;
  li.comment('head dim 256: each warpgroup adds its half of the dQ columns with red.global');
  inner.threads((t) =>
    sweepTile(t, st.dqAcc, (e) => {
      const row = e.b.let('dq_row', int32, add(q.i0, e.x[0]!));
      e.b.if(lt(row, args.seqlenQ), (s) => s.expr(reduceAddF32(target, add(dqRow, add(mul(row, p.policy.headDim), e.x[1]!)), e.value)));
    }),
  );
}

/**
 * The dQ tile into its shared-memory buffer (row-major fp32) once the previous bulk operation has
 * read it; a deterministic key split adds the second warpgroup's partial to the first's in a fixed order.
 */
function emitDqStaging(li: BlockBuilder, inner: BlockEmitter, st: FmhaBwdWsConsumerState): DqStaging {
  const { pipeline: p, target, smem, tid } = st.ctx;
  const P = p.policy;
  const atomic = P.dqMode === 'atomic';
  const replicas = atomic && p.dqSplit === 'K' ? 2 : 1;
  const tileBytes = P.tileM * P.headDim * 4;
  const issuer = li.let('dq_issuer', bool, replicas === 2 ? eq(bitAnd(tid, 127), 0) : eq(tid, 0));
  const buffer = li.let(
    'dq_tile',
    pointer(float32),
    cast(add(smem, replicas === 2 ? add(p.offsets.dqStage, mul(st.wg, tileBytes)) : p.offsets.dqStage), pointer(float32)),
  );
  const at = (x: readonly Expr[]): Expr => index(buffer, add(mul(x[0]!, P.headDim), x[1]!));
  li.if(issuer, (x) => x.expr(bulkWaitGroup(target, 0, { read: true })));
  li.expr(namedBarrierSync(target, 3, p.consumerThreads));
  if (!atomic && p.dqSplit === 'K') {
    li.if(eq(st.wg, 1), (w1) => st.emitter(w1).threads((t) => sweepTile(t, st.dqAcc, (e) => e.b.assign(at(e.x), e.value))));
    li.expr(namedBarrierSync(target, 4, p.consumerThreads));
    li.if(eq(st.wg, 0), (w0) => st.emitter(w0).threads((t) => sweepTile(t, st.dqAcc, (e) => e.b.assign(at(e.x), add(at(e.x), e.value)))));
  } else {
    inner.threads((t) => sweepTile(t, st.dqAcc, (e) => e.b.assign(at(e.x), e.value)));
  }
  li.expr(fenceProxyAsyncShared(target));
  li.expr(namedBarrierSync(target, 5, p.consumerThreads));
  return { atomic, issuer, buffer };
}

/** The issuing thread moves the staged rows inside the sequence: reduce-add (atomic), or store on the first key tile then reduce-add (split). */
function emitDqBulk(
  li: BlockBuilder,
  st: FmhaBwdWsConsumerState,
  key: FmhaBwdWsKeyTile,
  q: FmhaBwdWsQueryTile,
  dqRow: Expr,
  staging: DqStaging,
): void {
  const { target, args, pipeline: p } = st.ctx;
  const { headDim, tileM } = p.policy;
  const { buffer } = staging;
  const rows = li.let('dq_rows', int32, minOf(sub(args.seqlenQ, q.i0), tileM));
  li.if(and(staging.issuer, gt(rows, 0)), (x) => {
    const dst = x.let('dq_dst', pointer(float32), add(dqRow, mul(q.i0, headDim)));
    const bytes = mul(rows, headDim * 4);
    if (staging.atomic) x.expr(bulkReduceAddF32(target, dst, buffer, bytes));
    else
      x.if(
        eq(key.round, 0),
        (s) => s.expr(bulkStoreF32(target, dst, buffer, bytes)),
        (ad) => ad.expr(bulkReduceAddF32(target, dst, buffer, bytes)),
      );
    x.expr(bulkCommitGroup(target));
  });
}

/** End of a key tile: in split mode its dQ stores and adds land before the next tile's adds start. */
export function emitFmhaBwdDqKeyTileEnd(l: BlockBuilder, ctx: FmhaBwdWsContext): void {
  if (ctx.pipeline.policy.dqMode === 'split') {
    l.comment("deterministic dQ: this key tile's stores and adds land before the next tile's adds start");
    l.if(eq(ctx.tid, 0), (x) => x.expr(bulkWaitGroup(ctx.target, 0)));
  }
}

/** End of the consumers: the last bulk operations finish reading shared memory (and land) before the block exits. */
export function emitFmhaBwdDqDrain(cons: BlockBuilder, ctx: FmhaBwdWsContext): void {
  const { pipeline: p, tid } = ctx;
  cons.comment('the last bulk operations must finish reading shared memory (and land) before the block exits');
  if (!p.wide)
    cons.if(p.policy.dqMode === 'atomic' && p.dqSplit === 'K' ? eq(bitAnd(tid, 127), 0) : eq(tid, 0), (x) =>
      x.expr(bulkWaitGroup(ctx.target, 0)),
    );
}
