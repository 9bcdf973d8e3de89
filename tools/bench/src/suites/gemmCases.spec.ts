import { checkGemmProblem, findAnyGemmInstance, GEMM_LAYOUTS, GemmInstance, GemmSm80Instance } from '@tilekit/kernel-gemm';
import { describe, expect, it } from 'vitest';
import { GEMM_BENCH_CASES, GEMM_BENCH_SM80_INSTANCE, gemmSuiteCase } from './gemm.ts';

describe('gemm bench cases', () => {
  const cases = GEMM_BENCH_CASES.map((c) => gemmSuiteCase(c.problem, c.instance));

  it('keep the recorded tn case names; add 4096³ per other layout, the persistent 8192³ cases and one sm_80 case at 4096³; names are unique', () => {
    const names = cases.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const dtype of ['fp16', 'bf16']) {
      expect(names).toEqual(
        expect.arrayContaining([
          `gemm_${dtype}_8192x8192x8192`,
          `gemm_${dtype}_4096x4096x4096`,
          `gemm_${dtype}_2048x2048x2048`,
          `gemm_${dtype}_4097x4095x4100`,
          `gemm_${dtype}_8192x8192x1024`,
          `gemm_${dtype}_16x8192x8192`,
          `gemm_${dtype}_4096x4096x4096_nn`,
          `gemm_${dtype}_4096x4096x4096_nt`,
          `gemm_${dtype}_4096x4096x4096_tt`,
          `gemm_${dtype}_8192x8192x8192_persistent`,
        ]),
      );
    }
    expect(names).toContain('gemm_fp16_4096x4096x4096_sm80');
    expect(names).toHaveLength(21);
  });

  it('torch gets the same layout and sizes as ours; named instances can run their problem', () => {
    for (const c of cases) {
      expect(c.torch.op).toBe('gemm');
      for (const key of ['dtype', 'layout', 'm', 'n', 'k']) expect(c.torch.params[key], `${c.name} ${key}`).toBe(c.params[key]);
      expect(GEMM_LAYOUTS).toContain(c.params['layout']);
      const named = c.params['instance'];
      if (typeof named === 'string') {
        const instance = findAnyGemmInstance(named)!;
        if (instance instanceof GemmInstance) expect(instance.persistent).toBe(true);
        else expect([c.name, instance.name, instance.target.name]).toEqual(['gemm_fp16_4096x4096x4096_sm80', GEMM_BENCH_SM80_INSTANCE, 'sm_90a']);
        expect(instance instanceof GemmInstance || instance instanceof GemmSm80Instance).toBe(true);
        const p = c.params as Record<string, number | string>;
        expect(instance.unsupported(checkGemmProblem({ dtype: p['dtype'] as 'fp16', m: p['m'] as number, n: p['n'] as number, k: p['k'] as number }))).toEqual([]);
      }
    }
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 63, k: 64 }, 'gemm_sm90_ws_fp16_tn_128x256x64_s4_v2_persistent')).toThrow(/n = 63 is not a multiple/);
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 64, k: 64 }, 'nope')).toThrow(/must name a gemm catalog instance/);
    expect(() => gemmSuiteCase({ dtype: 'fp16', m: 64, n: 64, k: 60 }, GEMM_BENCH_SM80_INSTANCE)).toThrow(/lda = 60 is not a multiple of 8/);
  });
});
