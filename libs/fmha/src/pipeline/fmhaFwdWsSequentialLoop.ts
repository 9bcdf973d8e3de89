import type { BlockBuilder } from '@tilekit/codegen';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/**
 * The sequential schedule of the sm_90a forward's consumers: one key tile at a time, S = Q·Kᵀ,
 * the mask and softmax, O's rescale and P, then O += P·V waited before the next tile.
 */
export function emitFmhaFwdWsSequentialLoop(cons: BlockBuilder, steps: FmhaFwdWsTileSteps): void {
  const { ring, iters } = steps.ctx;
  const vote = steps.vote;
  cons.forRange({ name: 'it', to: iters }, (l, it) => {
    const { s, parity } = ring.stageOf(l, it);
    const j0 = steps.keyRow(l, it);
    const k = steps.kOperand(l, it, s);
    const vAddr = steps.vTile(l, s);
    steps.issueQk(l, k, parity);
    steps.waitQk(l, 0);
    steps.releaseK(l, k);
    const corr = steps.softmaxTile(l, it, j0, (t, c) => steps.rescaleAndPack(t, steps.oLiveNow(it), c));
    steps.publishP(l, it, corr);
    steps.issuePv(l, vAddr, s, parity, steps.pvAccumulate(it, 0), vote?.compute, true);
    if (vote !== undefined) steps.countPv(l, vote.compute);
    steps.releaseV(l, s);
  });
}
