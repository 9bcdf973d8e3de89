import { sm80, sm90a } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildGemmKernel, findAnyGemmInstance } from './anyGemmKernel.ts';
import { GEMM_ARCHS, resolveGemmArch } from './gemmArch.ts';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { NoGemmInstanceError, selectGemmInstance, selectGemmInstanceFor, selectGemmSm80Instance } from './gemmDispatch.ts';
import { GemmInstance } from './gemmInstance.ts';
import { checkGemmProblem, GEMM_DTYPES, GEMM_LAYOUTS, type GemmProblem } from './gemmProblem.ts';
import { GEMM_SM80_CATALOG, GEMM_SM80_CATALOG_SM90A, gemmSm80CatalogFor } from './sm80/gemmSm80Catalog.ts';
import { GemmSm80Instance } from './sm80/gemmSm80Instance.ts';

describe('gemm arch: which family runs on which device', () => {
  it('the device decides by default (no device: sm90a); sm80 kernels are built for the device; sm90a needs an sm_90a device', () => {
    expect(resolveGemmArch()).toEqual({ arch: 'sm90a', target: sm90a });
    expect(resolveGemmArch({ deviceArch: 'sm_90a' })).toEqual({ arch: 'sm90a', target: sm90a });
    expect(resolveGemmArch({ deviceArch: 'sm_80' })).toEqual({ arch: 'sm80', target: sm80 });
    expect(resolveGemmArch({ arch: 'sm80' })).toEqual({ arch: 'sm80', target: sm80 });
    expect(resolveGemmArch({ arch: 'sm80', deviceArch: 'sm_90a' })).toEqual({ arch: 'sm80', target: sm90a });
    expect(() => resolveGemmArch({ arch: 'sm90a', deviceArch: 'sm_80' })).toThrow(
      expect.objectContaining({ argument: 'arch', message: expect.stringMatching(/only on an sm_90a device/) }),
    );
    expect(() => resolveGemmArch({ deviceArch: 'sm_86' })).toThrow(expect.objectContaining({ argument: 'deviceArch' }));
    expect(() => resolveGemmArch({ arch: 'sm75' as never })).toThrow(ArgumentError);
  });

  it('names are unique across the sm_90a catalog and both sm_80 builds, and each is found by name', () => {
    const all = [...GEMM_CATALOG, ...GEMM_SM80_CATALOG, ...GEMM_SM80_CATALOG_SM90A];
    expect(new Set(all.map((i) => i.name)).size).toBe(all.length);
    for (const i of all) expect(findAnyGemmInstance(i.name)).toBe(i);
    expect(findAnyGemmInstance('gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_90a')?.target).toBe(sm90a);
    expect(findAnyGemmInstance('nope')).toBeUndefined();
    expect(gemmSm80CatalogFor(sm80)).toBe(GEMM_SM80_CATALOG);
    expect(GEMM_SM80_CATALOG_SM90A.map((i) => i.policy)).toEqual(GEMM_SM80_CATALOG.map((i) => i.policy));
  });
});

describe('gemm dispatch by target', () => {
  const problemArb = fc.record({
    dtype: fc.constantFrom(...GEMM_DTYPES),
    layout: fc.constantFrom(...GEMM_LAYOUTS),
    m: fc.integer({ min: 1, max: 5000 }),
    n: fc.integer({ min: 1, max: 5000 }),
    k: fc.integer({ min: 1, max: 5000 }),
    pad: fc.integer({ min: 0, max: 9 }),
  });
  const withLds = ({ pad, ...p }: { pad: number } & GemmProblem): GemmProblem => {
    const c = checkGemmProblem(p);
    return { ...p, lda: c.lda + pad, ldb: c.ldb + pad };
  };

  it('picks from the family of the device (or the one asked for), built for the device; the pick runs the problem, or every relevant instance of the family says why not', () => {
    fc.assert(
      fc.property(
        problemArb,
        fc.constantFrom(...GEMM_ARCHS, undefined),
        fc.constantFrom('sm_90a', 'sm_80', undefined),
        (raw, arch, deviceArch) => {
          if (arch === 'sm90a' && deviceArch === 'sm_80') return;
          const problem = withLds(raw);
          const { arch: family, target } = resolveGemmArch({ ...(arch ? { arch } : {}), ...(deviceArch ? { deviceArch } : {}) });
          const catalog = family === 'sm90a' ? GEMM_CATALOG : gemmSm80CatalogFor(target);
          try {
            const picked = selectGemmInstanceFor(problem, { ...(arch ? { arch } : {}), ...(deviceArch ? { deviceArch } : {}) });
            expect(catalog).toContain(picked);
            expect(picked.target.name).toBe(deviceArch ?? target.name);
            expect(picked.unsupported(checkGemmProblem(problem))).toEqual([]);
          } catch (error) {
            if (!(error instanceof NoGemmInstanceError)) throw error;
            const relevant = catalog.filter(
              (i) =>
                i.dtype === problem.dtype && i.policy.layout === problem.layout && !i.epilogue.bias && i.epilogue.activation === 'none',
            );
            expect(error.rejections.map((r) => r.instance)).toEqual(relevant.map((i) => i.name));
            for (const i of catalog) expect(i.unsupported(checkGemmProblem(problem)).length).toBeGreaterThan(0);
          }
        },
      ),
    );
  });

  it('sm80: the cp.async rows decide (leading dimensions multiples of 8), not TMA; layouts tn and nn only; the sm_90a path unchanged', () => {
    const p: GemmProblem = { dtype: 'bf16', m: 257, n: 129, k: 77, lda: 80, ldb: 80 };
    expect(selectGemmInstanceFor(p, { deviceArch: 'sm_80' }).name).toBe('gemm_sm80_mma_bf16_tn_128x128x32_w2x4_s4_v1_sm_80');
    expect(selectGemmInstanceFor(p, { arch: 'sm80', deviceArch: 'sm_90a' }).name).toBe(
      'gemm_sm80_mma_bf16_tn_128x128x32_w2x4_s4_v1_sm_90a',
    );
    expect(selectGemmSm80Instance({ dtype: 'fp16', m: 64, n: 63, k: 64, layout: 'nn' }).name).toBe(
      'gemm_sm80_mma_fp16_nn_128x128x32_w2x4_s4_v1_sm_80',
    );
    expect(() => selectGemmInstanceFor({ ...p, lda: 77 }, { arch: 'sm80' })).toThrow(
      /lda = 77 is not a multiple of 8 \(16-byte cp.async rows/,
    );
    expect(() => selectGemmInstanceFor({ ...p, layout: 'tt', ldb: 136 }, { arch: 'sm80' })).toThrow(
      /4 instance\(s\) of other kinds or dtypes not listed/,
    );
    // The default family is the sm_90a one, with the same pick as selectGemmInstance.
    for (const q of [
      { dtype: 'fp16', m: 8192, n: 8192, k: 8192 },
      { dtype: 'bf16', m: 257, n: 511, k: 200 },
    ] as const) {
      expect(selectGemmInstanceFor(q)).toBe(selectGemmInstance(q));
      expect(selectGemmInstanceFor(q, { deviceArch: 'sm_90a' })).toBeInstanceOf(GemmInstance);
    }
    expect(selectGemmInstanceFor(p, { deviceArch: 'sm_80' })).toBeInstanceOf(GemmSm80Instance);
  });

  it('buildGemmKernel checks the device arch before compiling: an sm_80 build is refused on an sm_90a device, by name', async () => {
    const device = { arch: 'sm_90a', name: 'fake H200' } as never;
    const compiler = { compile: () => Promise.reject(new Error('must not compile')) } as never;
    await expect(buildGemmKernel(GEMM_SM80_CATALOG[0]!, { device, compiler })).rejects.toThrow(
      expect.objectContaining({ argument: 'device', message: expect.stringMatching(/must be a sm_80 device/) }),
    );
    await expect(buildGemmKernel(GEMM_CATALOG[0]!, { device: { arch: 'sm_80', name: 'fake A100' } as never, compiler })).rejects.toThrow(
      /must be a sm_90a device/,
    );
  });
});
