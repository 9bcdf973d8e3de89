import { gfx942 } from '@tilekit/codegen';
import { describe, expect, it } from 'vitest';
import { checkGemmProblem } from '../gemmProblem.ts';
import { checkGemmGfx942Catalog, GEMM_GFX942_CATALOG, GemmGfx942CatalogError } from './gemmGfx942Catalog.ts';
import { GemmGfx942Instance, GemmGfx942PolicyError } from './gemmGfx942Instance.ts';
import { Gfx942ResourcesError, parseGfx942Resources } from './gfx942Resources.ts';

const fast = GEMM_GFX942_CATALOG.find((i) => i.policy.abVector === 8 && i.dtype === 'fp16' && i.policy.tileM === 256)!;
const anyShape = GEMM_GFX942_CATALOG.find((i) => i.policy.abVector === 1 && i.dtype === 'bf16')!;

describe('GEMM_GFX942_CATALOG', () => {
  it('fp16 and bf16, TN, 256×128×32 / 128×128×32 vectorized and 128×64×32 scalar, 256 threads; names are the keys, unique', () => {
    expect(GEMM_GFX942_CATALOG.map((i) => i.name)).toEqual([
      'gemm_gfx942_fp16_tn_256x128x32_w2x2_va8_vc4',
      'gemm_gfx942_fp16_tn_128x128x32_w2x2_va8_vc4',
      'gemm_gfx942_fp16_tn_128x64x32_w2x2_va1_vc1',
      'gemm_gfx942_bf16_tn_256x128x32_w2x2_va8_vc4',
      'gemm_gfx942_bf16_tn_128x128x32_w2x2_va8_vc4',
      'gemm_gfx942_bf16_tn_128x64x32_w2x2_va1_vc1',
    ]);
    for (const i of GEMM_GFX942_CATALOG) {
      expect(i.threads).toBe(256);
      expect(i.target).toBe(gfx942);
      expect(i.signature.name).toBe(i.name);
      expect(i.signature.target).toBe(gfx942);
    }
    expect(() => checkGemmGfx942Catalog([fast, fast])).toThrow(GemmGfx942CatalogError);
  });

  it('unsupported(problem): empty when it runs, one reason per broken predicate otherwise', () => {
    expect(fast.unsupported(checkGemmProblem({ dtype: 'fp16', m: 4097, n: 4092, k: 4096 }))).toEqual([]);
    expect(anyShape.unsupported(checkGemmProblem({ dtype: 'bf16', m: 3, n: 5, k: 7, lda: 9 }))).toEqual([]);
    const reasons = fast.unsupported(
      checkGemmProblem({ dtype: 'bf16', m: 64, n: 30, k: 100, lda: 101, ldc: 31, alpha: 2, bias: true, activation: 'relu' }),
      { a: 2, b: 256, c: 2 },
    );
    expect(reasons).toEqual([
      'dtype bf16: this kernel computes fp16',
      'alpha 2: the gfx942 kernels have no epilogue functor (alpha 1 only)',
      'bias: the gfx942 kernels add none',
      'activation relu: the gfx942 kernels apply none',
      'k = 100 is not a multiple of the 8-element A/B load',
      'lda = 101 is not a multiple of the 8-element A load',
      'ldb = 100 is not a multiple of the 8-element B load',
      'a address aligned to 2 bytes, needs 16',
      'n = 30 is not a multiple of the 4-element C store',
      'ldc = 31 is not a multiple of the 4-element C store',
      'c address aligned to 2 bytes, needs 8',
    ]);
    expect(fast.unsupported(checkGemmProblem({ dtype: 'fp16', m: 64, n: 64, k: 64, batch: 2, batchStrideA: 64 * 64 + 4 }))).toEqual([
      'batchStrideA = 4100 is not a multiple of the 8-element A load',
    ]);
  });

  it('launch: grid (block tiles, batch), 256 threads; the source is self-contained HIP with one entry named after the instance', () => {
    expect(fast.launch(checkGemmProblem({ dtype: 'fp16', m: 257, n: 128, k: 64, batch: 3 }))).toEqual({
      grid: [2, 3, 1],
      block: [256, 1, 1],
    });
    const src = fast.source();
    expect(src).toContain(`extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 256))) ${fast.name}(`);
    expect(src).not.toMatch(/#include/);
    expect(src).toContain('__builtin_amdgcn_mfma_f32_32x32x8f16');
    expect(anyShape.source()).toContain('__builtin_amdgcn_mfma_f32_32x32x8bf16_1k');
  });

  it('rejects vector widths it has no kernel for, naming them', () => {
    expect(() => new GemmGfx942Instance({ ...fast.policy, abVector: 4 as 8 })).toThrow(GemmGfx942PolicyError);
    expect(() => new GemmGfx942Instance({ ...fast.policy, cVector: 2 as 4 })).toThrow(/cVector/);
  });
});

describe('parseGfx942Resources', () => {
  // The backend's comments after the kernel's code (clang-19 -S), then its metadata block.
  const info = [
    '\t.size\tk1, .Lfunc_end0-k1',
    '                                        ; -- End function',
    '\t.section\t.AMDGPU.csdata,"",@progbits',
    '; Kernel info:',
    '; codeLenInByte = 9900',
    '; NumVgprs: 132',
    '; TotalNumVgprs: 292',
    '; LDSByteSize: 24576 bytes/workgroup (compile time only)',
    '; Occupancy: 1',
    '; WaveLimiterHint : 0',
  ];
  const asm = [
    ...info,
    '\t.amdgpu_metadata',
    '---',
    'amdhsa.kernels:',
    '  - .agpr_count:     160',
    '    .args:',
    '      - .address_space:  global',
    '        .offset:         0',
    '        .size:           8',
    '    .group_segment_fixed_size: 24576',
    '    .kernarg_segment_align: 8',
    '    .kernarg_segment_size: 72',
    '    .max_flat_workgroup_size: 256',
    '    .name:           k1',
    '    .private_segment_fixed_size: 0',
    '    .sgpr_count:     51',
    '    .sgpr_spill_count: 2',
    '    .vgpr_count:     292',
    '    .vgpr_spill_count: 0',
    '    .wavefront_size: 64',
    'amdhsa.target:   amdgcn-amd-amdhsa--gfx942',
    '...',
  ].join('\n');

  it('reads the scalar fields of each kernel entry (golden, from clang-19 output)', () => {
    expect(parseGfx942Resources(asm)).toEqual([
      {
        name: 'k1',
        vgprCount: 292,
        agprCount: 160,
        sgprCount: 51,
        vgprSpillCount: 0,
        sgprSpillCount: 2,
        privateSegmentBytes: 0,
        groupSegmentBytes: 24576,
        kernargBytes: 72,
        maxFlatWorkgroupSize: 256,
        wavefrontSize: 64,
        occupancy: 1,
      },
    ]);
  });

  it("reads each kernel's occupancy from the comments after its own code", () => {
    const two = asm.replace('; Occupancy: 1', '; Occupancy: 3');
    expect(parseGfx942Resources(two)[0]!.occupancy).toBe(3);
    expect(() => parseGfx942Resources(asm.replace('; Occupancy: 1\n', ''))).toThrow(/k1: no '; Occupancy:' line/);
    expect(() => parseGfx942Resources(asm.replace('.size\tk1,', '.size\tother,'))).toThrow(/k1: no '; Occupancy:' line/);
  });

  it('throws Gfx942ResourcesError without metadata or with a missing field', () => {
    expect(() => parseGfx942Resources('\t.text\n')).toThrow(Gfx942ResourcesError);
    expect(() => parseGfx942Resources(asm.replace('    .vgpr_count:     292\n', ''))).toThrow(/vgpr_count/);
  });
});
