import type { BlockBuilder } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { FmhaFwdConsumerSchedule } from './fmhaFwdConsumerSchedule.ts';
import { FmhaFwdWarpgroupTurns } from './fmhaFwdWarpgroupTurns.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import { emitFmhaFwdWsOverlappedLoop } from './fmhaFwdWsOverlappedLoop.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/** The named barriers of the turns: 13 and 14 (the P·V vote uses 1 … 12). */
const PINGPONG_FIRST_BARRIER = 13;

function checkPingPong(policy: FmhaFwdWsPolicy): void {
  if (policy.tileM !== 128)
    throw new BlockGemmPolicyError(
      'FmhaFwdWsPipeline schedule',
      'ping-pong takes turns between exactly two consumer warpgroups: tileM 128',
      String(policy.tileM),
    );
  if (policy.pvGate !== undefined)
    throw new BlockGemmPolicyError(
      'FmhaFwdWsPipeline schedule',
      'ping-pong takes no P·V gate (the vote skips issues inside a turn)',
      policy.pvGate.tag,
    );
}

function emitPingPong(cons: BlockBuilder, steps: FmhaFwdWsTileSteps): void {
  const turns = new FmhaFwdWarpgroupTurns(steps.ctx.target, steps.state.warpgroup, PINGPONG_FIRST_BARRIER);
  emitFmhaFwdWsOverlappedLoop(cons, steps, turns);
}

/**
 * FlashAttention-3's ping-pong: the softmax-overlapped schedule, with the two consumer warpgroups
 * taking turns to issue their GEMMs (`FmhaFwdWarpgroupTurns`), so that the tensor cores run one
 * warpgroup's S and P·V while the other warpgroup does its mask and softmax. Needs tileM 128.
 */
export const FMHA_FWD_PINGPONG_SCHEDULE: FmhaFwdConsumerSchedule = Object.freeze({
  tag: 'pingPong',
  key: Object.freeze({ config: { schedule: 'pingpong' }, tags: { schedule: '' } }),
  check: checkPingPong,
  emit: emitPingPong,
});
