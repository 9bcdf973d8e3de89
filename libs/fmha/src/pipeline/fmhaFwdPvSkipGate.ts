import { cast, int32, pointer, type BlockBuilder } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { FmhaFwdPvGate, FmhaFwdPvGateContext, FmhaFwdPvGateSite } from './fmhaFwdPvGate.ts';
import { FMHA_PV_VOTE_SHARED_BYTES, FmhaFwdPvSkipVote } from './fmhaFwdPvSkipVote.ts';
import type { FmhaFwdPvSkipArgs, FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/**
 * Sparge's PV-skip vote as a P·V gate ({@link FmhaFwdPvSkipVote}): the mode (none, warp, block) and
 * threshold are runtime values; its vote slots rotate over three tiles, which the two-stage ring
 * keeps safe, so the policy must have 2 stages.
 */
export class FmhaFwdPvSkipGate implements FmhaFwdPvGate {
  readonly tag = 'pvskip';
  readonly sharedBytes = FMHA_PV_VOTE_SHARED_BYTES;

  check(policy: FmhaFwdWsPolicy): void {
    if (policy.stages !== 2)
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline stages',
        'must be 2 with the PV-skip gate (the vote rotates three rounds of slots and barriers)',
        String(policy.stages),
      );
  }

  create(b: BlockBuilder, ctx: FmhaFwdPvGateContext, values: FmhaFwdPvSkipArgs): FmhaFwdPvGateSite {
    const votes = b.let('pv_votes', pointer(int32), cast(ctx.shared, pointer(int32)));
    return new FmhaFwdPvSkipVote(b, ctx.target, ctx.block, ctx.softmax, {
      ...values,
      iters: ctx.iters,
      m0: ctx.m0,
      seqlenQ: ctx.seqlenQ,
      warpgroup: ctx.warpgroup,
      tid: ctx.tid,
      consumerThreads: ctx.consumerThreads,
      votes,
    });
  }
}
