import { bool, gt, int32, lit, sub, uint32, type BlockBuilder, type Expr, type VarExpr } from '@tilekit/codegen';
import { FMHA_FWD_NO_TURNS, type FmhaFwdIssueTurns } from './fmhaFwdWarpgroupTurns.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/**
 * The softmax-overlapped schedule of the sm_90a forward's consumers (FlashAttention-3's
 * intra-warpgroup overlap): the first tile alone (S, softmax, P); then per tile it ≥ 1, S of it and
 * P·V of it − 1 are issued together, and tile it's mask and softmax run while that P·V does; the
 * last tile's P·V after the loop. With the vote, a tile's decision is carried into the iteration
 * that issues its P·V (`pv_pending_compute`). `turns` brackets each group of issues (the first S, S
 * with the previous P·V, the last P·V): the ping-pong's turns between warpgroups, or nothing.
 */
export function emitFmhaFwdWsOverlappedLoop(
  cons: BlockBuilder,
  steps: FmhaFwdWsTileSteps,
  turns: FmhaFwdIssueTurns = FMHA_FWD_NO_TURNS,
): void {
  const { iters } = steps.ctx;
  cons.comment("intra-warpgroup overlap: the previous tile's P·V runs while this tile's softmax does");
  // The previous tile's vote, carried into the iteration that issues its P·V.
  const pending = steps.vote === undefined ? undefined : cons.declare('pv_pending_compute', bool, lit(true, bool), { storage: 'mutable' });
  cons.if(gt(iters, 0), (ov) => {
    turns.start(ov);
    emitFirstTile(ov, steps, pending, turns);
    ov.forRange({ name: 'it', from: 1, to: iters }, (l, it) => emitOverlappedTile(l, it, steps, pending, turns));
    emitLastPv(ov, steps, pending, turns);
    turns.finish(ov);
  });
}

/** Tile 0: S, its softmax and P (O holds nothing yet). */
function emitFirstTile(ov: BlockBuilder, steps: FmhaFwdWsTileSteps, pending: VarExpr | undefined, turns: FmhaFwdIssueTurns): void {
  ov.comment('the first tile alone: S, its softmax, P');
  const first = { s: lit(0, int32), parity: lit(0, uint32) };
  const j00 = steps.keyRow(ov, lit(0, int32));
  const k = turns.turn(ov, () => {
    const k0 = steps.kOperand(ov, lit(0, int32), first.s);
    steps.issueQk(ov, k0, first.parity);
    return k0;
  });
  steps.waitQk(ov, 0);
  steps.releaseK(ov, k);
  const corr = steps.softmaxTile(ov, lit(0, int32), j00, (t, c) => steps.rescaleAndPack(t, lit(false, bool), c));
  steps.publishP(ov, lit(0, int32), corr);
  carryVote(ov, steps, pending);
}

/** Tile it ≥ 1: S of it and P·V of it − 1 in flight together; it's softmax; then O's rescale and P once that P·V is done. */
function emitOverlappedTile(
  l: BlockBuilder,
  it: Expr,
  steps: FmhaFwdWsTileSteps,
  pending: VarExpr | undefined,
  turns: FmhaFwdIssueTurns,
): void {
  const { ring } = steps.ctx;
  const { s, parity } = ring.stageOf(l, it);
  const j0 = steps.keyRow(l, it);
  const { k, prev } = turns.turn(l, () => {
    const kIt = steps.kOperand(l, it, s);
    steps.issueQk(l, kIt, parity);
    const stage = ring.stageOf(l, l.let('it_prev', int32, sub(it, 1)));
    steps.issuePv(l, steps.vTile(l, stage.s), stage.s, stage.parity, steps.pvAccumulate(it, 1), pending, false);
    return { k: kIt, prev: stage };
  });
  l.comment("this tile's S is done (the previous P·V may still run)");
  steps.waitQk(l, 1);
  steps.releaseK(l, k);
  const corr = steps.softmaxTile(l, it, j0);
  l.comment('the previous P·V is done: its V stage is free, O may be rescaled and P overwritten');
  steps.waitPv(l);
  if (pending !== undefined) steps.countPv(l, pending);
  steps.releaseV(l, prev.s);
  steps.threadsOf(l).threads((t) => steps.rescaleAndPack(t, steps.oLiveNow(it), corr));
  steps.publishP(l, it, corr);
  carryVote(l, steps, pending);
}

/** The last tile's P·V, waited, and its V stage released. */
function emitLastPv(ov: BlockBuilder, steps: FmhaFwdWsTileSteps, pending: VarExpr | undefined, turns: FmhaFwdIssueTurns): void {
  ov.comment("the last tile's P·V");
  const last = ov.let('it_last', int32, sub(steps.ctx.iters, 1));
  const stage = steps.ctx.ring.stageOf(ov, last);
  turns.turn(ov, () => steps.issuePv(ov, steps.vTile(ov, stage.s), stage.s, stage.parity, steps.pvAccumulate(last, 0), pending, false));
  steps.waitPv(ov);
  if (pending !== undefined) steps.countPv(ov, pending);
  steps.releaseV(ov, stage.s);
}

/** The tile's vote becomes the pending decision of its P·V. */
function carryVote(l: BlockBuilder, steps: FmhaFwdWsTileSteps, pending: VarExpr | undefined): void {
  if (pending !== undefined && steps.vote !== undefined) l.assign(pending, steps.vote.compute);
}
