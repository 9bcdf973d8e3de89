// The output split of the sm_90a forward: its rules (checked when the pipeline is built), the
// layout it implies (threads, the P·V GEMM's N, V stages) and its instance-key part. Its numerics
// are GPU-tested by @tilekit/kernel-fmha-fwd (fmhaFwdOutputSplit.gpu.spec.ts).
import { BlockGemmPolicyError } from '@tilekit/gemm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { FMHA_FWD_PINGPONG_SCHEDULE } from './fmhaFwdPingPongSchedule.ts';
import { fmhaFwdKeyPartOf } from './fmhaFwdKeyPart.ts';
import { FmhaFwdRecomputeSOutputSplit } from './fmhaFwdOutputSplit.ts';
import { FmhaFwdPvSkipGate } from './fmhaFwdPvSkipGate.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy({
  headDim: 64,
  headDimV: 512,
  tileM: 64,
  tileN: 64,
  outputSplit: new FmhaFwdRecomputeSOutputSplit(2),
});

const { outputSplit: _split, ...unsplit } = policy;

describe('FmhaFwdRecomputeSOutputSplit', () => {
  it('slices × (tileM / 64) consumer warpgroups, the P·V GEMM over one slice, V stages holding all of d_v', () => {
    fc.assert(
      fc.property(fc.constantFrom(2, 3, 4), fc.constantFrom(64, 128, 256), (slices, slice) => {
        fc.pre(slices * slice <= 512); // two V stages of d_v ≤ 512 at 64 key rows fit the shared memory
        const p = new FmhaFwdWsPipeline({
          ...policy,
          headDimV: slices * slice,
          outputSplit: new FmhaFwdRecomputeSOutputSplit(slices),
          consumerRegisters: 96,
        });
        const whole = new FmhaFwdWsPipeline({ ...unsplit, headDimV: slice, consumerRegisters: 96 });
        expect(p.slices).toBe(slices);
        expect(p.rowThreads).toBe(128);
        expect(p.consumerThreads).toBe(128 * slices);
        expect(p.pv.policy.tileN).toBe(slice);
        expect(p.vStageBytes).toBe(slices * whole.vStageBytes);
        expect(p.kStageBytes).toBe(whole.kStageBytes);
        expect(p.qBytes).toBe(whole.qBytes);
      }),
    );
  });

  it('rejects slices that are not whole 64-column slabs or wider than 256, a P·V gate, ping-pong, and slice counts outside [2, 4]', () => {
    const bad = (p: Partial<FmhaFwdWsPolicy>) => () => new FmhaFwdWsPipeline({ ...policy, ...p });
    expect(bad({ headDimV: 96 })).toThrow(/whole 64-column slabs/);
    expect(bad({ headDimV: 1024 })).toThrow(BlockGemmPolicyError);
    expect(bad({ headDimV: 1024 })).toThrow(/in \[16, 512\]/);
    expect(bad({ pvGate: new FmhaFwdPvSkipGate() })).toThrow(/no P·V gate/);
    expect(bad({ tileM: 128, schedule: FMHA_FWD_PINGPONG_SCHEDULE, consumerRegisters: 112 })).toThrow(/ping-pong/);
    for (const n of [0, 1, 5, 2.5]) expect(() => new FmhaFwdRecomputeSOutputSplit(n)).toThrow(/slices/);
    expect(() => new FmhaFwdWsPipeline(unsplit)).toThrow(/headDimV/);
  });

  it('keys: dvSlices with a name tag; nothing without a split', () => {
    expect(fmhaFwdKeyPartOf(undefined)).toEqual({ config: {}, tags: {} });
    expect(fmhaFwdKeyPartOf(new FmhaFwdRecomputeSOutputSplit(2))).toEqual({
      config: { dvSlices: 2 },
      tags: { dvSlices: 'dvslices' },
    });
  });
});
