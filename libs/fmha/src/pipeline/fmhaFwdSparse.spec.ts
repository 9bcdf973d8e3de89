// The sparse parts of the sm_90a forward pipeline: key-tile walks, the P·V gate (PV-skip vote) and the
// int8 Q·Kᵀ operand. Their numerics are GPU-tested by @tilekit/kernel-sparge's specs; here: the rules,
// shared-memory accounting and the code they put into a kernel.
import { int32, lit, pointer, uint8, variable } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { BlockMaskKeyTileWalk } from './fmhaFwdKeyTiles.ts';
import { FmhaFwdInt8QkOperand } from './fmhaFwdInt8QkOperand.ts';
import { FmhaFwdPvSkipGate } from './fmhaFwdPvSkipGate.ts';
import { FMHA_PV_SKIP_MODES, FMHA_PV_VOTE_SHARED_BYTES } from './fmhaFwdPvSkipVote.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy();

describe('BlockMaskKeyTileWalk', () => {
  const map = variable('map', pointer(uint8, { const: true }));
  it('reserves 2 bytes per listable key block plus the count', () => {
    expect(new BlockMaskKeyTileWalk(map, lit(4, int32), 2048).sharedBytes).toBe(2 * 2048 + 16);
  });
  it('rejects a list size that is not a multiple of 32 in [32, 32768]', () => {
    for (const bad of [0, 16, 100, 65536]) expect(() => new BlockMaskKeyTileWalk(map, lit(4, int32), bad)).toThrow(/maxKeyBlocks/);
  });
});

describe('FmhaFwdWsPipeline sparse hooks', () => {
  const pvGate = new FmhaFwdPvSkipGate();
  const qkOperand = new FmhaFwdInt8QkOperand();
  const keyTileWalk = { sharedBytes: 4112 };

  it('keeps the dense layout and adds the walk’s and the gate’s shared memory after the barriers', () => {
    const dense = new FmhaFwdWsPipeline(policy);
    const sparse = new FmhaFwdWsPipeline({ ...policy, keyTileWalk, pvGate });
    expect(pvGate.sharedBytes).toBe(FMHA_PV_VOTE_SHARED_BYTES);
    expect(sparse.keyTileOffset).toBe(dense.usedBytes);
    expect(sparse.pvGateOffset).toBe(sparse.keyTileOffset + 4112);
    expect(sparse.usedBytes).toBe(sparse.pvGateOffset + FMHA_PV_VOTE_SHARED_BYTES);
    expect(new FmhaFwdWsPipeline({ ...policy, keyTileWalk }).usedBytes).toBe(dense.usedBytes + 4112);
    expect(
      new FmhaFwdWsPipeline({ ...policy, keyTileWalk: new BlockMaskKeyTileWalk(variable('m', pointer(uint8)), lit(4, int32), 2048) })
        .usedBytes,
    ).toBe(dense.usedBytes + 4112);
    expect(() => new FmhaFwdWsPipeline({ ...policy, keyTileWalk: { sharedBytes: -1 } })).toThrow(/keyTileWalk.sharedBytes/);
  });

  it('the PV-skip gate needs the two-stage ring (its slots rotate over three tiles), checked at construction', () => {
    expect(() => new FmhaFwdWsPipeline({ ...policy, stages: 3, pvGate })).toThrow(BlockGemmPolicyError);
    expect(() => new FmhaFwdWsPipeline({ ...policy, stages: 3, pvGate })).toThrow(/must be 2 with the PV-skip gate/);
  });

  it('int8 Q·Kᵀ: one byte-wide swizzle row of Q and K per tile row, head dims 64 and 128 only', () => {
    const fp16 = new FmhaFwdWsPipeline(policy);
    const int8 = new FmhaFwdWsPipeline({ ...policy, qkOperand });
    expect(int8.slabsQK).toBe(1);
    expect(int8.qBytes).toBe(fp16.qBytes / 2);
    expect(int8.kStageBytes).toBe(fp16.kStageBytes / 2);
    expect(int8.vStageBytes).toBe(fp16.vStageBytes);
    expect(int8.qk.policy.dtype).toBe('int8');
    expect(new FmhaFwdWsPipeline({ ...policy, headDim: 64, headDimV: 64, qkOperand }).qBytes).toBe(128 * 64);
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDim: 96, headDimV: 96, qkOperand })).toThrow(BlockGemmPolicyError);
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDim: 96, headDimV: 96, qkOperand })).toThrow(/64 or 128 with int8/);
  });

  it('numbers the PV-skip modes as the kernels’ int argument', () => {
    expect(FMHA_PV_SKIP_MODES).toEqual({ none: 0, warp: 1, block: 2 });
  });
});
