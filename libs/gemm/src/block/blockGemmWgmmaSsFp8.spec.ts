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

const fp8 = [
  ['fp8e4m3fn', 'e4m3'],
  ['fp8e5m2', 'e5m2'],
] as const;

const policyArb: fc.Arbitrary<WgmmaBlockGemmPolicy> = fc
  .record({
    dtype: fc.constantFrom('fp8e4m3fn' as const, 'fp8e5m2' as const),
    tileM: fc.constantFrom(64, 128, 192, 256),
    tileK: fc.constantFrom(64, 128),
    warpgroupsN: fc.constantFrom(1, 2),
    nPerWarpgroup: fc.integer({ min: 1, max: 8 }).map((x) => 16 * x),
  })
  .filter(({ tileM, warpgroupsN }) => (tileM / 64) * warpgroupsN <= 4)
  .map(({ dtype, tileM, tileK, warpgroupsN, nPerWarpgroup }) => ({
    dtype,
    tileM,
    tileN: nPerWarpgroup * warpgroupsN,
    tileK,
    ...(warpgroupsN > 1 ? { warpgroupsN } : {}),
  }));

describe('WgmmaBlockGemmSs fp8 (wgmma m64nNk32.f32.e4m3.e4m3 / .e5m2.e5m2, K-major tiles)', () => {
  for (const [dtype, t] of fp8) {
    it(
      `${dtype}: tileK 128: 128B swizzle, 4 k32 steps 32 bytes apart; tileK 64: 64B swizzle, 2 steps; ` +
        "the int8 tiles and offsets, bf16's fp32 accumulator and C distribution",
      () => {
        const k128 = new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 });
        expect([k128.swizzle, k128.kSteps, k128.atom.k, k128.atom.instruction, k128.atom.wrapperName]).toEqual([
          '128B',
          4,
          32,
          `wgmma.mma_async.sync.aligned.m64n128k32.f32.${t}.${t}`,
          `tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk`,
        ]);
        expect([k128.aTileBytes, k128.bTileBytes, k128.aWarpgroupStride, k128.threads]).toEqual([128 * 128, 128 * 128, 64 * 128, 256]);
        expect(k128.bOffsets).toEqual([0, 32, 64, 96]);
        expect(k128.aOffsets).toEqual([
          [0, 32, 64, 96],
          [8192, 8224, 8256, 8288],
        ]);
        expect([k128.aLayout.elementBytes, k128.aLayout.leadingByteOffset, k128.aLayout.strideByteOffset]).toEqual([1, 16, 1024]);
        expect([k128.accumulatorsPerThread, k128.accumulatorType, k128.atom.accType]).toEqual([64, float32, 'fp32']);
        // Byte for byte the int8 geometry: the same 1-byte K-major layouts and descriptor offsets.
        const int8 = new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 });
        expect([k128.aOffsets, k128.bOffsets, k128.aLayout.bytes, k128.bLayout.repeatBytes]).toEqual([
          int8.aOffsets,
          int8.bOffsets,
          int8.aLayout.bytes,
          int8.bLayout.repeatBytes,
        ]);
        for (let r = 0; r < 128; r += 7)
          for (let c = 0; c < 128; c += 5)
            expect(k128.aLayout.descriptor.calculateOffset([r, c])).toBe(int8.aLayout.descriptor.calculateOffset([r, c]));
        const k64 = new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 64 });
        expect([k64.swizzle, k64.kSteps, k64.aTileBytes, k64.aWarpgroupStride, k64.aLayout.strideByteOffset, k64.bLayout.swizzle]).toEqual([
          '64B',
          2,
          128 * 64,
          64 * 64,
          512,
          '64B',
        ]);
        expect(k64.bOffsets).toEqual([0, 32]);
        const bf16 = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN: 128, tileK: 64 });
        expect(k128.cEncoding.equals(bf16.cEncoding)).toBe(true);
        expect(k128.atom.c.encoding.equals(bf16.atom.c.encoding)).toBe(true);
        expect(k64.cEncoding.equals(bf16.cEncoding)).toBe(true);
      },
    );
  }

  it(
    "for random fp8 policies: every k32 step's descriptor names the layout bytes of (64g + i, " +
      '32·kk + j), the steps tile K exactly, and the C distribution is the bf16 one',
    () => {
      fc.assert(
        fc.property(policyArb, (policy) => {
          const blk = new WgmmaBlockGemmSs(policy);
          expect(blk.kSteps * 32).toBe(policy.tileK);
          expect(blk.swizzle).toBe(policy.tileK === 128 ? '128B' : '64B');
          expect(blk.accumulatorType).toBe(float32);
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
          const bf16 = new WgmmaBlockGemmSs({ ...policy, dtype: 'bf16', tileK: 64 });
          expect(blk.cEncoding.equals(bf16.cEncoding)).toBe(true);
          expect(blk.accumulatorsPerThread).toBe(bf16.accumulatorsPerThread);
        }),
        { numRuns: 40 },
      );
    },
  );

  it("emitMma: one k32 fp8 wgmma per step with descriptors of the layout's swizzle code (1 = 128B, 2 = 64B), fp32 operand pins", () => {
    for (const [dtype, t] of fp8) {
      const k128 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 }));
      expect(k128.match(new RegExp(`tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk\\(acc, `, 'g'))).toHaveLength(4);
      expect(k128).toContain(`wgmma.mma_async.sync.aligned.m64n128k32.f32.${t}.${t} {%0,`);
      expect(k128).toContain('%64, %65, p, 1, 1;');
      expect(k128).toContain('tk_wgmma_fence_operands_64(acc)');
      expect(k128).not.toContain('tk_wgmma_fence_operands_s32_');
      expect(k128).not.toContain('"+r"(d[');
      for (const off of [32, 64, 96]) expect(k128).toContain(`tk_wgmma_desc_encode(${(1 << 15) + off}u, 16u, 1024u, 0u, 1u)`);
      // The first step starts D from A·B (scale-d 0 as given), the others add.
      expect(k128).toContain(
        `tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk(acc, tk_wgmma_desc_encode(a_wg, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(32768u, 16u, 1024u, 0u, 1u), 0);`,
      );
      expect(k128).toContain(
        `tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk(acc, tk_wgmma_desc_encode(1120u, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(32864u, 16u, 1024u, 0u, 1u), 1);`,
      );
      const k64 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 64 }));
      expect(k64.match(new RegExp(`tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk\\(acc, `, 'g'))).toHaveLength(2);
      expect(k64).toContain(`tk_wgmma_desc_encode(${(1 << 15) + 32}u, 16u, 512u, 0u, 2u)`);
      expect(k64).not.toMatch(/, 1u\)/);
      // Split along N: each warpgroup's wgmma is N = 128.
      const wgn2 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 64, tileN: 256, tileK: 128, warpgroupsN: 2 }));
      expect(wgn2).toContain(`tk_wgmma_m64n128k32_f32_${t}_${t}_ss_kk(acc, `);
    }
  });

  it('typed errors: MN-major fp8, tileK other than 128/64, the fnuz encodings, an int32 accumulator', () => {
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128, aMajor: 'MN' })).toThrow(
      BlockGemmPolicyError,
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK: 128, aMajor: 'MN' })).toThrow(
      /aMajor: must be "K" for fp8e4m3fn \(the FP8 wgmma has no transpose\)/,
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp8e5m2', tileM: 128, tileN: 128, tileK: 128, bMajor: 'MN' })).toThrow(
      /bMajor: must be "K" for fp8e5m2/,
    );
    for (const tileK of [32, 96, 256])
      expect(() => new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: 128, tileN: 128, tileK })).toThrow(
        /tileK: must be 128 or 64 for fp8e4m3fn/,
      );
    for (const dtype of ['fp8e4m3fnuz', 'fp8e5m2fnuz'] as const)
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 })).toThrow(
        /dtype: must be fp16 or bf16 \(or int8, fp8e4m3fn, fp8e5m2\)/,
      );
    expect(() => emitted(new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: 64, tileN: 64, tileK: 128 }), int32)).toThrow(
      /emitMma acc: must be a .*float.* tensor \(the fp8e4m3fn wgmma accumulator\)/,
    );
  });
});
