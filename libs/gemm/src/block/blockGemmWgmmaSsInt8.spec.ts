import { float32, int32, lit, sm90a, SourceBuilder, uint32 } from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wgmmaOperandDescriptor } from '../smemLayouts.ts';
import { BlockGemmPolicyError, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from './blockGemmWgmmaSs.ts';

/** Renders one kernel whose body is `emitMma` (scale-d 0) + `emitWait(0)` of `blk` on an accumulator of `accType`. */
function emitted(blk: WgmmaBlockGemmSs, accType = blk.accumulatorType): string {
  const src = new SourceBuilder({ dialect: sm90a, header: 'emitMma probe' });
  src.function({ name: 'probe', qualifiers: sm90a.kernelQualifiers(), params: {} }, (b) => {
    const block = new BlockEmitter(b, sm90a, { numThreads: blk.threads });
    const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, accType);
    block.threads((t) => {
      blk.emitMma(t.b, sm90a, acc, {
        aTile: lit(1024, uint32),
        bTile: lit(1 << 15, uint32),
        warpgroup: lit(0, int32),
        accumulate: lit(0, int32),
      });
      blk.emitWait(t.b, sm90a, acc, 0);
    });
  });
  return src.render();
}

const policyArb: fc.Arbitrary<WgmmaBlockGemmPolicy> = fc
  .record({
    tileM: fc.constantFrom(64, 128, 192, 256),
    tileK: fc.constantFrom(64, 128),
    warpgroupsN: fc.constantFrom(1, 2),
    nPerWarpgroup: fc.integer({ min: 1, max: 8 }).map((x) => 16 * x),
  })
  .filter(({ tileM, warpgroupsN }) => (tileM / 64) * warpgroupsN <= 4)
  .map(({ tileM, tileK, warpgroupsN, nPerWarpgroup }) => ({
    dtype: 'int8',
    tileM,
    tileN: nPerWarpgroup * warpgroupsN,
    tileK,
    ...(warpgroupsN > 1 ? { warpgroupsN } : {}),
  }));

describe('WgmmaBlockGemmSs int8 (wgmma m64nNk32.s32.s8.s8, K-major tiles)', () => {
  it(
    'tileK 128: 128B swizzle, 4 k32 steps 32 bytes apart; tileK 64: 64B swizzle (64-byte ' +
      "rows), 2 steps; int32 accumulator laid out like fp16's fp32 one",
    () => {
      const k128 = new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 });
      expect([k128.swizzle, k128.kSteps, k128.atom.k, k128.atom.instruction]).toEqual([
        '128B',
        4,
        32,
        'wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8',
      ]);
      expect([k128.aTileBytes, k128.bTileBytes, k128.aWarpgroupStride, k128.threads]).toEqual([128 * 128, 128 * 128, 64 * 128, 256]);
      expect(k128.bOffsets).toEqual([0, 32, 64, 96]);
      expect(k128.aOffsets).toEqual([
        [0, 32, 64, 96],
        [8192, 8224, 8256, 8288],
      ]);
      expect([k128.aLayout.leadingByteOffset, k128.aLayout.strideByteOffset]).toEqual([16, 1024]);
      expect([k128.accumulatorsPerThread, k128.accumulatorType]).toEqual([64, int32]);
      const k64 = new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 64 });
      expect([k64.swizzle, k64.kSteps, k64.aTileBytes, k64.aWarpgroupStride, k64.aLayout.strideByteOffset, k64.bLayout.swizzle]).toEqual([
        '64B',
        2,
        128 * 64,
        64 * 64,
        512,
        '64B',
      ]);
      expect(k64.bOffsets).toEqual([0, 32]);
      const fp16 = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 });
      expect(k128.cEncoding.equals(fp16.cEncoding)).toBe(true);
      expect([fp16.swizzle, fp16.accumulatorType]).toEqual(['128B', float32]);
    },
  );

  it(
    "for random policies: every k32 step's descriptor names the layout bytes of (64g + i, " +
      '32·kk + j), the steps tile K exactly, and each C element has one owner',
    () => {
      fc.assert(
        fc.property(policyArb, (policy) => {
          const blk = new WgmmaBlockGemmSs(policy);
          expect(blk.kSteps * 32).toBe(policy.tileK);
          expect(blk.swizzle).toBe(policy.tileK === 128 ? '128B' : '64B');
          for (let g = 0; g < blk.warpgroupsM; g++)
            for (let kk = 0; kk < blk.kSteps; kk++) {
              expect(blk.aOffsets[g]![kk]).toBe(blk.aLayout.descriptor.calculateOffset([64 * g, 32 * kk]));
              expect(g * blk.aWarpgroupStride + blk.aOffsets[0]![kk]!).toBe(
                wgmmaOperandDescriptor(blk.aLayout, { tileAddress: 0, mn0: 64 * g, k0: 32 * kk, k: 32 }).startAddress,
              );
            }
          for (let kk = 0; kk < blk.kSteps; kk++) expect(blk.bOffsets[kk]).toBe(blk.bLayout.descriptor.calculateOffset([0, 32 * kk]));
          expect(blk.bWarpgroupStride).toBe(
            blk.warpgroupsN > 1 ? blk.bLayout.descriptor.calculateOffset([policy.tileN / blk.warpgroupsN, 0]) : 0,
          );
          const enc = blk.cEncoding;
          const owners = new Set<string>();
          for (let t = 0; t < enc.numThreads; t++) {
            const p = enc.partitionIndexOf(t);
            for (let d = 0; d < enc.threadBufferSize; d++) owners.add(enc.calculateXIndexFromD(p, d).join(','));
          }
          expect(owners.size).toBe(policy.tileM * policy.tileN);
          expect(enc.threadBufferSize * enc.numThreads).toBe(policy.tileM * policy.tileN);
        }),
        { numRuns: 40 },
      );
    },
  );

  it("emitMma: one k32 wgmma per step with descriptors of the layout's swizzle code (1 = 128B, 2 = 64B), int32 operand pins around the async window", () => {
    const k128 = emitted(new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 }));
    expect(k128.match(/tk_wgmma_m64n128k32_s32_s8_s8_ss_kk\(acc, /g)).toHaveLength(4);
    expect(k128).toContain('tk_wgmma_fence_operands_s32_64(acc)');
    expect(k128).not.toContain('+f');
    for (const off of [32, 64, 96]) expect(k128).toContain(`tk_wgmma_desc_encode(${(1 << 15) + off}u, 16u, 1024u, 0u, 1u)`);
    const k64 = emitted(new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 64 }));
    expect(k64.match(/tk_wgmma_m64n128k32_s32_s8_s8_ss_kk\(acc, /g)).toHaveLength(2);
    expect(k64).toContain(`tk_wgmma_desc_encode(${(1 << 15) + 32}u, 16u, 512u, 0u, 2u)`);
    expect(k64).not.toMatch(/, 1u\)/);
    // The fp16 path keeps its fp32 pin and 128B code.
    const fp16 = emitted(new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 }));
    expect(fp16).toContain('tk_wgmma_fence_operands_64(acc)');
    expect(fp16).toContain(`tk_wgmma_desc_encode(${(1 << 15) + 32}u, 16u, 1024u, 0u, 1u)`);
  });

  it('typed errors: MN-major int8, tileK other than 128/64, another 8-bit dtype, an accumulator of the wrong type', () => {
    expect(() => new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128, aMajor: 'MN' })).toThrow(BlockGemmPolicyError);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128, bMajor: 'MN' })).toThrow(
      /bMajor: must be "K" for int8/,
    );
    for (const tileK of [32, 96, 256])
      expect(() => new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK })).toThrow(/tileK: must be 128 or 64 for int8/);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 128 })).toThrow(/tileK: must be 64/);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'uint8', tileM: 128, tileN: 128, tileK: 128 })).toThrow(
      /dtype: must be fp16 or bf16 \(or int8, fp8e4m3fn, fp8e5m2\)/,
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 80, tileK: 128, warpgroupsN: 2 })).toThrow(BlockGemmPolicyError);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 80, tileK: 128, warpgroupsN: 2 })).toThrow(/warpgroupsN/);
    expect(() => emitted(new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 64, tileN: 64, tileK: 64 }), float32)).toThrow(
      /emitMma acc: must be a .*int.* tensor \(the int8 wgmma accumulator\)/,
    );
    expect(() => emitted(new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 64 }), int32)).toThrow(
      /must be a .*float.* tensor/,
    );
  });
});
