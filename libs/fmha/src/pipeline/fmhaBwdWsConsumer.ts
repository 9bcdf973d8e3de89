import {
  add,
  bitAnd,
  cast,
  gt,
  int32,
  lit,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  setMaxNReg,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitFmhaBwdDqAccumulation, emitFmhaBwdDqDrain, emitFmhaBwdDqKeyTileEnd } from './fmhaBwdDqAccumulation.ts';
import {
  makeFmhaBwdWsConsumerState,
  type FmhaBwdWsConsumerState,
  type FmhaBwdWsKeyTile,
  type FmhaBwdWsQueryTile,
} from './fmhaBwdWsConsumerState.ts';
import {
  FMHA_BWD_SLAB_BYTES,
  fmhaBwdKeyTile,
  fmhaBwdQueryIteration,
  fmhaBwdQueryRange,
  fmhaBwdRowStage,
  fmhaBwdStageOf,
  type FmhaBwdWsContext,
} from './fmhaBwdWsContext.ts';
import {
  emitFmhaBwdDkAndDq,
  emitFmhaBwdDkDvEpilogue,
  emitFmhaBwdDsT,
  emitFmhaBwdDvAndDpT,
  emitFmhaBwdMask,
  emitFmhaBwdProbabilities,
  emitFmhaBwdScoreModifier,
  emitFmhaBwdScoresT,
  emitFmhaBwdStoreDsT,
} from './fmhaBwdWsTileSteps.ts';

/**
 * The two consumer warpgroups of `FmhaBwdWsPipeline` (fmhaBwdWsPipeline.ts), registers raised to
 * `consumerRegisters`: per key tile of the block, every query tile that sees it, then its dK and dV.
 */
export function emitFmhaBwdWsConsumers(cons: BlockBuilder, ctx: FmhaBwdWsContext): void {
  const P = ctx.pipeline.policy;
  cons.comment(`2 consumer warpgroups of 64 key rows: registers up to ${P.consumerRegisters}`);
  cons.expr(setMaxNReg(ctx.target, 'inc', P.consumerRegisters));
  const st = makeFmhaBwdWsConsumerState(cons, ctx);
  cons.forRange({ name: 'round', to: ctx.keyRounds }, (l, round) => emitConsumerKeyTile(l, st, round));
  emitFmhaBwdDqDrain(cons, ctx);
}

/** One key tile: wait for its K and V, walk its query tiles, release K and V, store dK and dV. */
function emitConsumerKeyTile(l: BlockBuilder, st: FmhaBwdWsConsumerState, round: Expr): void {
  const { ctx } = st;
  const key = beginKeyTile(l, st, round);
  l.forRange({ name: 'it', to: key.iters }, (li, it) => emitConsumerQueryTile(li, st, key, it));
  emitFmhaBwdDqKeyTileEnd(l, ctx);
  l.expr(mbarrierArrive(ctx.target, ctx.kvEmpty));
  emitFmhaBwdDkDvEpilogue(l, st, key);
}

/** The key tile of round `round`: K and V landed, its query range and this warpgroup's K and V chunks. */
function beginKeyTile(l: BlockBuilder, st: FmhaBwdWsConsumerState, round: Expr): FmhaBwdWsKeyTile {
  const { ctx, tiles } = st;
  const { pipeline: p, smemAddr } = ctx;
  const O = p.offsets;
  const { j0 } = fmhaBwdKeyTile(l, ctx, round);
  const kvParity = l.let('kv_parity', uint32, cast(bitAnd(tiles, 1), uint32));
  l.assign(tiles, add(tiles, 1));
  l.expr(mbarrierWaitParity(ctx.target, ctx.kvFull, kvParity));
  const range = fmhaBwdQueryRange(l, ctx, j0);
  // This warpgroup's 64 key rows (at head dim 256 both share the block's only chunk).
  const chunkOf = p.wide ? lit(0, int32) : st.wg;
  const kChunk = l.let('k_chunk', uint32, add(smemAddr, cast(add(O.k, mul(chunkOf, p.slabsQK * FMHA_BWD_SLAB_BYTES)), uint32)));
  const vChunk = l.let('v_chunk', uint32, add(smemAddr, cast(add(O.v, mul(chunkOf, p.slabsV * FMHA_BWD_SLAB_BYTES)), uint32)));
  return { round, j0, ...range, kChunk, vChunk };
}

/** One query tile of a key tile: the steps of fmhaBwdWsTileSteps.ts, then dQ into the workspace. */
function emitConsumerQueryTile(li: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile, it: Expr): void {
  const { ctx } = st;
  const q = beginQueryTile(li, st, key, it);
  emitFmhaBwdScoresT(li, st, key, q);
  const inner = st.emitter(li);
  const score = emitFmhaBwdScoreModifier(li, inner, st, key, q);
  emitFmhaBwdMask(li, st, key, q);
  emitFmhaBwdProbabilities(inner, st, q, score);
  const firstIt = li.let('acc_kv', int32, cast(gt(it, 0), int32));
  emitFmhaBwdDvAndDpT(li, inner, st, key, q, firstIt);
  emitFmhaBwdDsT(inner, st, q, score);
  emitFmhaBwdStoreDsT(li, st);
  emitFmhaBwdDkAndDq(li, st, key, q, firstIt);
  li.expr(mbarrierArrive(ctx.target, ctx.qEmpty(q.s)));
  emitFmhaBwdDqAccumulation(li, inner, st, key, q);
}

/** The next ring stage: its query head and rows, Q and dO tiles and LSE/D rows, once landed. */
function beginQueryTile(li: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile, it: Expr): FmhaBwdWsQueryTile {
  const { ctx, done } = st;
  const { pipeline: p, smemAddr } = ctx;
  const O = p.offsets;
  const { s, parity } = fmhaBwdStageOf(li, done, p.policy.stages);
  li.assign(done, add(done, 1));
  const { head, i0 } = fmhaBwdQueryIteration(li, ctx, it, key);
  const qTile = li.let('q_tile', uint32, add(smemAddr, cast(add(O.q, mul(s, p.qStageBytes)), uint32)));
  const doTile = li.let('do_tile', uint32, add(smemAddr, cast(add(O.dO, mul(s, p.doStageBytes)), uint32)));
  const lseStage = fmhaBwdRowStage(li, ctx, s);
  li.expr(mbarrierWaitParity(ctx.target, ctx.qFull(s), parity));
  return { it, s, head, i0, qTile, doTile, lseStage };
}
