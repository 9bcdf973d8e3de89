// WgmmaBlockGemmSs for its 8-bit dtypes (int8, fp8e4m3fn, fp8e5m2): one table row per dtype with its
// golden values (instruction, accumulator, operand pins, error wording); the tiles, descriptor
// offsets and C distribution are the same for all three (1-byte K-major operands, k32 steps).
import { float32, int32, lit, sm90a, SourceBuilder, uint32, type CType } from '@tilekit/codegen';
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

/** One 8-bit dtype of the block GEMM and what is its own. */
interface ByteRow {
  readonly dtype: 'int8' | 'fp8e4m3fn' | 'fp8e5m2';
  /** The k32 instruction's type suffix (D, A, B): `s32.s8.s8`, `f32.e4m3.e4m3`, `f32.e5m2.e5m2`. */
  readonly types: string;
  readonly accumulatorType: CType;
  readonly accType: 'int32' | 'fp32';
  /** The accumulator type the block GEMM rejects. */
  readonly wrongAccumulator: CType;
  /** The accumulator kind named by the emitMma error. */
  readonly accKind: 'int' | 'float';
  /** The operand pin around the async window (N = 128: 64 registers). */
  readonly pin: string;
  /** What the emitted source must not contain: the other accumulator's pin or asm constraints. */
  readonly foreignPins: readonly string[];
  /** The end of the asm operand list: descriptors, scale-d predicate (and imm-scale-a/b for fp8). */
  readonly operandTail: string;
  /** Which wgmma the MN-major error names as having no transpose. */
  readonly noTranspose: string;
}

const byteRows: readonly ByteRow[] = [
  {
    dtype: 'int8',
    types: 's32.s8.s8',
    accumulatorType: int32,
    accType: 'int32',
    wrongAccumulator: float32,
    accKind: 'int',
    pin: 'tk_wgmma_fence_operands_s32_64(acc)',
    foreignPins: ['+f', 'tk_wgmma_fence_operands_64('],
    operandTail: '%64, %65, p;',
    noTranspose: 'the integer wgmma has no transpose',
  },
  ...(
    [
      ['fp8e4m3fn', 'e4m3'],
      ['fp8e5m2', 'e5m2'],
    ] as const
  ).map(([dtype, t]): ByteRow => ({
    dtype,
    types: `f32.${t}.${t}`,
    accumulatorType: float32,
    accType: 'fp32',
    wrongAccumulator: int32,
    accKind: 'float',
    pin: 'tk_wgmma_fence_operands_64(acc)',
    foreignPins: ['tk_wgmma_fence_operands_s32_', '"+r"(d['],
    operandTail: '%64, %65, p, 1, 1;',
    noTranspose: 'the FP8 wgmma has no transpose',
  })),
];

/** The `tk_wgmma_m64n<n>k32_<types>_ss_kk` leaf of `row` at width n. */
const wrapperOf = (row: ByteRow, n: number): string => `tk_wgmma_m64n${n}k32_${row.types.replaceAll('.', '_')}_ss_kk`;

/** Random valid policies of `dtype`: tileM up to 256, tileK 128 or 64, N split over one or two warpgroups. */
const policyArb = (dtype: ByteRow['dtype']): fc.Arbitrary<WgmmaBlockGemmPolicy> =>
  fc
    .record({
      tileM: fc.constantFrom(64, 128, 192, 256),
      tileK: fc.constantFrom(64, 128),
      warpgroupsN: fc.constantFrom(1, 2),
      nPerWarpgroup: fc.integer({ min: 1, max: 8 }).map((x) => 16 * x),
    })
    .filter(({ tileM, warpgroupsN }) => (tileM / 64) * warpgroupsN <= 4)
    .map(({ tileM, tileK, warpgroupsN, nPerWarpgroup }) => ({
      dtype,
      tileM,
      tileN: nPerWarpgroup * warpgroupsN,
      tileK,
      ...(warpgroupsN > 1 ? { warpgroupsN } : {}),
    }));

describe('WgmmaBlockGemmSs 8-bit (wgmma m64nNk32.s32.s8.s8 / .f32.e4m3.e4m3 / .f32.e5m2.e5m2, K-major tiles)', () => {
  for (const row of byteRows) {
    const { dtype } = row;

    it(
      `${dtype}: tileK 128: 128B swizzle, 4 k32 steps 32 bytes apart; tileK 64: 64B swizzle (64-byte rows), 2 steps; ` +
        `${row.accType} accumulator laid out like fp16's and bf16's fp32 one`,
      () => {
        const k128 = new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 });
        expect([k128.swizzle, k128.kSteps, k128.atom.k, k128.atom.instruction, k128.atom.wrapperName]).toEqual([
          '128B',
          4,
          32,
          `wgmma.mma_async.sync.aligned.m64n128k32.${row.types}`,
          wrapperOf(row, 128),
        ]);
        expect([k128.aTileBytes, k128.bTileBytes, k128.aWarpgroupStride, k128.threads]).toEqual([128 * 128, 128 * 128, 64 * 128, 256]);
        expect(k128.bOffsets).toEqual([0, 32, 64, 96]);
        expect(k128.aOffsets).toEqual([
          [0, 32, 64, 96],
          [8192, 8224, 8256, 8288],
        ]);
        expect([k128.aLayout.elementBytes, k128.aLayout.leadingByteOffset, k128.aLayout.strideByteOffset]).toEqual([1, 16, 1024]);
        expect([k128.accumulatorsPerThread, k128.accumulatorType, k128.atom.accType]).toEqual([64, row.accumulatorType, row.accType]);
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
        const fp16 = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 });
        const bf16 = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN: 128, tileK: 64 });
        expect(k128.cEncoding.equals(fp16.cEncoding)).toBe(true);
        expect(k128.cEncoding.equals(bf16.cEncoding)).toBe(true);
        expect(k128.atom.c.encoding.equals(bf16.atom.c.encoding)).toBe(true);
        expect(k64.cEncoding.equals(bf16.cEncoding)).toBe(true);
      },
    );

    it(
      `for random ${dtype} policies: every k32 step's descriptor names the layout bytes of (64g + i, ` +
        '32·kk + j), the steps tile K exactly, each C element has one owner, and the C distribution is the bf16 one',
      () => {
        fc.assert(
          fc.property(policyArb(dtype), (policy) => {
            const blk = new WgmmaBlockGemmSs(policy);
            expect(blk.kSteps * 32).toBe(policy.tileK);
            expect(blk.swizzle).toBe(policy.tileK === 128 ? '128B' : '64B');
            expect(blk.accumulatorType).toBe(row.accumulatorType);
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
            const bf16 = new WgmmaBlockGemmSs({ ...policy, dtype: 'bf16', tileK: 64 });
            expect(blk.cEncoding.equals(bf16.cEncoding)).toBe(true);
            expect(blk.accumulatorsPerThread).toBe(bf16.accumulatorsPerThread);
          }),
          { numRuns: 40 },
        );
      },
    );

    it(
      `emitMma ${dtype}: one k32 wgmma per step with descriptors of the layout's swizzle code (1 = 128B, 2 = 64B), ` +
        `${row.accType} operand pins around the async window`,
      () => {
        const wrapper = wrapperOf(row, 128);
        const k128 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 }));
        expect(k128.match(new RegExp(`${wrapper}\\(acc, `, 'g'))).toHaveLength(4);
        expect(k128).toContain(`wgmma.mma_async.sync.aligned.m64n128k32.${row.types} {%0,`);
        expect(k128).toContain(row.operandTail);
        expect(k128).toContain(row.pin);
        for (const foreign of row.foreignPins) expect(k128).not.toContain(foreign);
        for (const off of [32, 64, 96]) expect(k128).toContain(`tk_wgmma_desc_encode(${(1 << 15) + off}u, 16u, 1024u, 0u, 1u)`);
        // The first step starts D from A·B (scale-d 0 as given), the others add.
        expect(k128).toContain(
          `${wrapper}(acc, tk_wgmma_desc_encode(a_wg, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(32768u, 16u, 1024u, 0u, 1u), 0);`,
        );
        expect(k128).toContain(
          `${wrapper}(acc, tk_wgmma_desc_encode(1120u, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(32864u, 16u, 1024u, 0u, 1u), 1);`,
        );
        const k64 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 64 }));
        expect(k64.match(new RegExp(`${wrapper}\\(acc, `, 'g'))).toHaveLength(2);
        expect(k64).toContain(`tk_wgmma_desc_encode(${(1 << 15) + 32}u, 16u, 512u, 0u, 2u)`);
        expect(k64).not.toMatch(/, 1u\)/);
        // Split along N: each warpgroup's wgmma is N = 128.
        const wgn2 = emitted(new WgmmaBlockGemmSs({ dtype, tileM: 64, tileN: 256, tileK: 128, warpgroupsN: 2 }));
        expect(wgn2).toContain(`${wrapper}(acc, `);
      },
    );

    it(`typed errors: MN-major ${dtype}, tileK other than 128/64, a split N into non-k32 widths, an accumulator of the wrong type`, () => {
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128, aMajor: 'MN' })).toThrow(BlockGemmPolicyError);
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128, aMajor: 'MN' })).toThrow(
        new RegExp(`aMajor: must be "K" for ${dtype} \\(${row.noTranspose}\\)`),
      );
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128, bMajor: 'MN' })).toThrow(
        new RegExp(`bMajor: must be "K" for ${dtype}`),
      );
      for (const tileK of [32, 96, 256])
        expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK })).toThrow(
          new RegExp(`tileK: must be 128 or 64 for ${dtype}`),
        );
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 80, tileK: 128, warpgroupsN: 2 })).toThrow(BlockGemmPolicyError);
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 80, tileK: 128, warpgroupsN: 2 })).toThrow(/warpgroupsN/);
      for (const tileK of [64, 128])
        expect(() => emitted(new WgmmaBlockGemmSs({ dtype, tileM: 64, tileN: 64, tileK }), row.wrongAccumulator)).toThrow(
          new RegExp(`emitMma acc: must be a .*${row.accKind}.* tensor \\(the ${dtype} wgmma accumulator\\)`),
        );
    });
  }

  for (const row of byteRows.filter((r) => r.dtype !== 'int8'))
    it(`${row.dtype}: byte for byte the int8 geometry (the same 1-byte K-major layouts and descriptor offsets)`, () => {
      const fp8 = new WgmmaBlockGemmSs({ dtype: row.dtype, tileM: 128, tileN: 128, tileK: 128 });
      const int8 = new WgmmaBlockGemmSs({ dtype: 'int8', tileM: 128, tileN: 128, tileK: 128 });
      expect([fp8.aOffsets, fp8.bOffsets, fp8.aLayout.bytes, fp8.bLayout.repeatBytes]).toEqual([
        int8.aOffsets,
        int8.bOffsets,
        int8.aLayout.bytes,
        int8.bLayout.repeatBytes,
      ]);
      for (let r = 0; r < 128; r += 7)
        for (let c = 0; c < 128; c += 5)
          expect(fp8.aLayout.descriptor.calculateOffset([r, c])).toBe(int8.aLayout.descriptor.calculateOffset([r, c]));
    });

  it('the fp16 control keeps its 128B swizzle at tileK 64, its fp32 accumulator and pin, and the 128B descriptor code', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 });
    expect([blk.swizzle, blk.accumulatorType]).toEqual(['128B', float32]);
    const fp16 = emitted(blk);
    expect(fp16).toContain('tk_wgmma_fence_operands_64(acc)');
    expect(fp16).toContain(`tk_wgmma_desc_encode(${(1 << 15) + 32}u, 16u, 1024u, 0u, 1u)`);
  });

  it('typed errors outside the 8-bit rows: fp16 tileK 128, other 8-bit dtypes (uint8, the fnuz encodings), an int32 bf16 accumulator', () => {
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 128 })).toThrow(/tileK: must be 64/);
    for (const dtype of ['uint8', 'fp8e4m3fnuz', 'fp8e5m2fnuz'] as const)
      expect(() => new WgmmaBlockGemmSs({ dtype, tileM: 128, tileN: 128, tileK: 128 })).toThrow(
        /dtype: must be fp16 or bf16 \(or int8, fp8e4m3fn, fp8e5m2\)/,
      );
    expect(() => emitted(new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 64 }), int32)).toThrow(
      /must be a .*float.* tensor/,
    );
  });
});
