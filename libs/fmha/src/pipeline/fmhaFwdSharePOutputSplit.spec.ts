// The shared-P output split of the sm_90a forward: its rules (checked when the pipeline is built),
// the shared memory and barrier counts it implies, and its instance-key part. Its numerics are
// GPU-tested by @tilekit/kernel-ffpa (ffpa.gpu.spec.ts).
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { FmhaFwdChunkedQkSource } from './fmhaFwdChunkedQkSource.ts';
import { FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } from './fmhaFwdConsumerSchedule.ts';
import { FmhaFwdRecomputeSOutputSplit } from './fmhaFwdOutputSplit.ts';
import { FmhaFwdSharePOutputSplit } from './fmhaFwdSharePOutputSplit.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy({
  headDim: 512,
  headDimV: 512,
  tileM: 64,
  tileN: 64,
  qkSource: new FmhaFwdChunkedQkSource(4),
  outputSplit: new FmhaFwdSharePOutputSplit(),
});

describe('FmhaFwdSharePOutputSplit', () => {
  it('one scoring warpgroup releases Q and K; two buffers of P words and two factors per thread after the other regions', () => {
    const p = new FmhaFwdWsPipeline(policy);
    const recompute = new FmhaFwdWsPipeline({ ...policy, outputSplit: new FmhaFwdRecomputeSOutputSplit(2) });
    expect(p.consumerThreads).toBe(256);
    expect(p.qkWarps).toBe(4);
    expect(recompute.qkWarps).toBe(8);
    expect(p.pv.aRegisters).toBe(16);
    expect(p.outputSplitOffset % 16).toBe(0);
    expect(p.outputSplitOffset).toBeGreaterThanOrEqual(recompute.usedBytes);
    expect(p.usedBytes).toBe(p.outputSplitOffset + 32 + 2 * (16 + 2) * 128 * 4);
    expect(recompute.usedBytes).toBeLessThan(p.usedBytes);
  });

  it('needs tileM 64 and the sequential or the softmax-overlapped schedule; d_v in whole slabs, the second half padded', () => {
    expect(() => new FmhaFwdWsPipeline({ ...policy, schedule: FMHA_FWD_SEQUENTIAL_SCHEDULE })).not.toThrow();
    expect(() => new FmhaFwdWsPipeline({ ...policy, schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE })).not.toThrow();
    expect(() => new FmhaFwdWsPipeline({ ...policy, tileM: 128, consumerRegisters: 112 })).toThrow(/tileM 64/);
    const padded = new FmhaFwdWsPipeline({ ...policy, headDimV: 320 });
    expect(padded.pv.policy.tileN).toBe(192);
    expect(padded.slabsV).toBe(6);
    expect(padded.vStageBytes).toBe(6 * 64 * 128);
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDimV: 352 })).toThrow(/whole 64-column slabs/);
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDimV: 64 })).toThrow(/none empty/);
  });

  it('keys: two slices and the shared-memory P exchange', () => {
    expect(new FmhaFwdSharePOutputSplit().key).toEqual({
      config: { dvSlices: 2, pExchange: 'smem' },
      tags: { dvSlices: 'dvslices', pExchange: 'p' },
    });
  });
});
