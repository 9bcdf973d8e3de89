// The consumer schedules of the sm_90a forward: their rules (checked when the pipeline is built) and
// their instance-key parts. The emitted loops are compared in @tilekit/kernel-fmha-fwd's specs and
// run on the GPU there.
import { BlockGemmPolicyError } from '@tilekit/gemm';
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } from './fmhaFwdConsumerSchedule.ts';
import { fmhaFwdKeyPartOf } from './fmhaFwdKeyPart.ts';
import { FMHA_FWD_PINGPONG_SCHEDULE } from './fmhaFwdPingPongSchedule.ts';
import { FmhaFwdPvSkipGate } from './fmhaFwdPvSkipGate.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy();

describe('FmhaFwdConsumerSchedule', () => {
  it('ping-pong needs exactly two consumer warpgroups and no P·V gate, checked at construction', () => {
    expect(() => new FmhaFwdWsPipeline({ ...policy, schedule: FMHA_FWD_PINGPONG_SCHEDULE })).not.toThrow();
    for (const tileM of [64, 192]) {
      expect(() => new FmhaFwdWsPipeline({ ...policy, tileM, schedule: FMHA_FWD_PINGPONG_SCHEDULE })).toThrow(BlockGemmPolicyError);
      expect(() => new FmhaFwdWsPipeline({ ...policy, tileM, schedule: FMHA_FWD_PINGPONG_SCHEDULE })).toThrow(/tileM 128/);
    }
    const pvGate = new FmhaFwdPvSkipGate();
    expect(() => new FmhaFwdWsPipeline({ ...policy, pvGate, schedule: FMHA_FWD_PINGPONG_SCHEDULE })).toThrow(/no P·V gate/);
    for (const schedule of [FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE])
      for (const tileM of [64, 128]) expect(() => new FmhaFwdWsPipeline({ ...policy, tileM, pvGate, schedule })).not.toThrow();
  });

  it('keys: nothing for the sequential schedule (the default), the old overlapSoftmax field, and a pingpong name tag', () => {
    expect(fmhaFwdKeyPartOf(undefined)).toEqual({ config: {}, tags: {} });
    expect(fmhaFwdKeyPartOf(FMHA_FWD_SEQUENTIAL_SCHEDULE)).toEqual({ config: {}, tags: {} });
    expect(fmhaFwdKeyPartOf(FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE)).toEqual({ config: { overlapSoftmax: true }, tags: {} });
    expect(fmhaFwdKeyPartOf(FMHA_FWD_PINGPONG_SCHEDULE)).toEqual({ config: { schedule: 'pingpong' }, tags: { schedule: '' } });
  });
});
