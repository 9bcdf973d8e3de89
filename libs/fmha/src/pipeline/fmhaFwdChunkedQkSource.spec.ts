// The chunked Q·Kᵀ source of the sm_90a forward: the shared memory it plans (independent of the head
// dim), its rules (checked when the pipeline is built) and its instance-key part. Its numerics are
// GPU-tested by @tilekit/kernel-ffpa (ffpa.gpu.spec.ts).
import { BlockGemmPolicyError } from '@tilekit/gemm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { FmhaFwdChunkedQkSource } from './fmhaFwdChunkedQkSource.ts';
import { FMHA_FWD_PINGPONG_SCHEDULE } from './fmhaFwdPingPongSchedule.ts';
import { FmhaFwdInt8QkOperand } from './fmhaFwdInt8QkOperand.ts';
import { FmhaFwdRecomputeSOutputSplit } from './fmhaFwdOutputSplit.ts';
import { FMHA_FWD_RESIDENT_QK } from './fmhaFwdQkSource.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy({
  dtype: 'bf16',
  headDim: 512,
  headDimV: 512,
  tileM: 64,
  tileN: 64,
  qkSource: new FmhaFwdChunkedQkSource(4),
  outputSplit: new FmhaFwdRecomputeSOutputSplit(2),
});

describe('FmhaFwdChunkedQkSource', () => {
  it('plans stages × (Q chunk + K chunk) bytes and no resident Q, whatever the head dim; V and the barriers follow', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.constantFrom(2, 4, 8), (chunks, stages) => {
        const p = new FmhaFwdWsPipeline({ ...policy, headDim: 64 * chunks, headDimV: 256, qkSource: new FmhaFwdChunkedQkSource(stages) });
        expect(p.qBytes).toBe(0);
        expect(p.kStages).toBe(stages);
        expect(p.kStageBytes).toBe(64 * 128 + 64 * 128);
        expect(p.slabsQK).toBe(chunks);
        expect(p.vOffset).toBe(stages * p.kStageBytes);
        expect(p.keyTileOffset - p.barrierOffset).toBe(8 * (1 + 4 * 2 + 2 * stages));
      }),
    );
  });

  it('the resident source keeps Q whole and K in whole tiles, head dims up to 256', () => {
    const { qkSource: _c, outputSplit: _o, ...resident } = policy;
    const p = new FmhaFwdWsPipeline({ ...resident, headDim: 256, headDimV: 256 });
    expect(p.qkSource).toBe(FMHA_FWD_RESIDENT_QK);
    expect(p.qBytes).toBe(4 * 64 * 128);
    expect(p.kStages).toBe(2);
    expect(p.kStageBytes).toBe(4 * 64 * 128);
    expect(() => new FmhaFwdWsPipeline({ ...resident, headDim: 320, headDimV: 256 })).toThrow(/in \[16, 256\]/);
  });

  it('rejects head dims that are not whole chunks or above 1024, int8 Q·Kᵀ, ping-pong, and other stage counts', () => {
    const bad = (p: Partial<FmhaFwdWsPolicy>) => () => new FmhaFwdWsPipeline({ ...policy, ...p });
    expect(bad({ headDim: 528 })).toThrow(/64-column chunks/);
    expect(bad({ headDim: 1088 })).toThrow(/in \[16, 1024\]/);
    expect(
      bad({ headDim: 128, headDimV: 128, outputSplit: new FmhaFwdRecomputeSOutputSplit(2), qkOperand: new FmhaFwdInt8QkOperand() }),
    ).toThrow(BlockGemmPolicyError);
    const { outputSplit: _o, ...unsplit } = policy;
    expect(
      () => new FmhaFwdWsPipeline({ ...unsplit, headDimV: 128, tileM: 128, consumerRegisters: 240, schedule: FMHA_FWD_PINGPONG_SCHEDULE }),
    ).toThrow(/ping-pong/);
    for (const n of [0, 1, 3, 16]) expect(() => new FmhaFwdChunkedQkSource(n)).toThrow(/stages/);
  });

  it('keys: qkChunkStages with a name tag', () => {
    expect(new FmhaFwdChunkedQkSource(4).key).toEqual({ config: { qkChunkStages: 4 }, tags: { qkChunkStages: 'qkc' } });
    expect(FMHA_FWD_RESIDENT_QK.key).toEqual({ config: {}, tags: {} });
  });
});
