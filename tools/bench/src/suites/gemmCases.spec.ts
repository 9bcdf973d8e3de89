import {
  checkGemmProblem,
  findAnyGemmInstance,
  GEMM_LAYOUTS,
  gemmOperandStorage,
  GemmInstance,
  GemmSm80Instance,
} from '@tilekit/kernel-gemm';
import { describe, expect, it } from 'vitest';
import { caseSeed } from './caseSeed.ts';
import {
  GEMM_BENCH_CASES,
  GEMM_BENCH_PROBLEMS,
  GEMM_BENCH_SM80_INSTANCE,
  gemmCaseInstance,
  gemmCaseProblem,
  gemmReferenceParams,
  gemmSuiteCase,
} from './gemmCases.ts';

/** The recorded case names (benchmarks/results/gemm.json), in suite order. */
const RECORDED_NAMES = [
  ...['fp16', 'bf16'].flatMap((dtype) =>
    [
      '8192x8192x8192',
      '4096x4096x4096',
      '2048x2048x2048',
      '4097x4095x4100',
      '8192x8192x1024',
      '16x8192x8192',
      '4096x4096x4096_nn',
      '4096x4096x4096_nt',
      '4096x4096x4096_tt',
    ].map((shape) => `gemm_${dtype}_${shape}`),
  ),
  'gemm_fp16_8192x8192x8192_persistent',
  'gemm_bf16_8192x8192x8192_persistent',
  'gemm_fp16_4096x4096x4096_sm80',
];

describe('gemm bench cases', () => {
  const cases = GEMM_BENCH_CASES.map((c) => gemmSuiteCase(c.problem, c.instance));

  it('keep the recorded names, in order: tn shapes, 4096³ per other layout, the persistent 8192³ cases and one sm_80 case', () => {
    expect(cases.map((c) => c.name)).toEqual(RECORDED_NAMES);
  });

  it('ask the server for REFERENCE_OPS.md gemm with our sizes and layout; lda/ldb only where ours pads (the ragged case, 4104)', () => {
    for (const c of cases) {
      expect(c.reference.op).toBe('gemm');
      const padded = c.params['k'] === 4100;
      const keys = ['dtype', 'm', 'n', 'k', 'layout', ...(padded ? ['lda', 'ldb'] : [])];
      expect(Object.keys(c.reference.params).sort(), c.name).toEqual(keys.sort());
      for (const key of keys) expect(c.reference.params[key], `${c.name} ${key}`).toBe(c.params[key]);
      if (padded) expect([c.reference.params['lda'], c.reference.params['ldb']]).toEqual([4104, 4104]);
      expect(GEMM_LAYOUTS).toContain(c.params['layout']);
    }
  });

  it("give torch's operands ours' pitches: lda and ldb are the packed pitch rounded up to 16 bytes (TMA's global stride)", () => {
    for (const c of cases) {
      const p = gemmCaseProblem(c);
      const storage = gemmOperandStorage(p.layout);
      const packedA = storage.a === 'row' ? p.k : p.m;
      const packedB = storage.b === 'col' ? p.k : p.n;
      expect([p.lda, p.ldb], c.name).toEqual([Math.ceil(packedA / 8) * 8, Math.ceil(packedB / 8) * 8]);
      expect([c.reference.params['lda'] ?? packedA, c.reference.params['ldb'] ?? packedB], c.name).toEqual([p.lda, p.ldb]);
      expect(p.ldc, c.name).toBe(p.n);
    }
  });

  it('judge C at its dtype against torch-matmul; seeds are the name hash, unique across the suite', () => {
    for (const c of cases) {
      expect(c.precision).toEqual({ c: c.params['dtype'] });
      expect(c.errorBaselines).toEqual(['torch-matmul']);
      expect(c.seed).toBe(caseSeed(c.name));
    }
    expect(new Set(cases.map((c) => c.seed)).size).toBe(cases.length);
    expect(cases.find((c) => c.name === 'gemm_fp16_4097x4095x4100')?.seed).toBe(1843391981);
  });

  it('read back the problem each case was made from', () => {
    GEMM_BENCH_PROBLEMS.forEach((p, i) => expect(gemmCaseProblem(cases[i]!)).toEqual(checkGemmProblem(p)));
    expect(gemmReferenceParams(checkGemmProblem({ dtype: 'bf16', m: 3, n: 5, k: 7, layout: 'nt', lda: 8 }))).toEqual({
      dtype: 'bf16',
      m: 3,
      n: 5,
      k: 7,
      layout: 'nt',
      lda: 8,
    });
  });

  it('run named instances that can run their problem; the others dispatch', () => {
    for (const c of cases) {
      const named = c.params['instance'];
      const instance = gemmCaseInstance(c, gemmCaseProblem(c));
      if (typeof named !== 'string') {
        expect(instance.name.startsWith('gemm_sm90_ws_'), c.name).toBe(true);
        continue;
      }
      expect(instance.name).toBe(named);
      if (instance instanceof GemmInstance) expect(instance.persistent).toBe(true);
      else
        expect([c.name, instance.name, instance.target.name]).toEqual([
          'gemm_fp16_4096x4096x4096_sm80',
          GEMM_BENCH_SM80_INSTANCE,
          'sm_90a',
        ]);
      expect(instance instanceof GemmInstance || instance instanceof GemmSm80Instance).toBe(true);
      expect(findAnyGemmInstance(named)!.unsupported(gemmCaseProblem(c))).toEqual([]);
    }
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 63, k: 64 }, 'gemm_sm90_ws_fp16_tn_128x256x64_s4_v2_persistent')).toThrow(
      /n = 63 is not a multiple/,
    );
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 64, k: 64 }, 'nope')).toThrow(/must name a gemm catalog instance/);
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 64, k: 60 }, GEMM_BENCH_SM80_INSTANCE)).toThrow(
      /lda = 60 is not a multiple of 8/,
    );
  });
});
