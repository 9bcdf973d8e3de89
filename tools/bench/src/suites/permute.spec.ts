import { permuteShapes } from '@tilekit/kernel-permute';
import { describe, expect, it } from 'vitest';
import { caseSeed } from './caseSeed.ts';
import { PERMUTE_BENCH_PROBLEMS, permuteCaseProblem, permuteSuiteCase } from './permute.ts';

/** The recorded case names (benchmarks/results/permute.json), in suite order. */
const RECORDED_NAMES = [
  'bhsd2bshd_fp16_b16_h32_s8192_d128',
  'bshd2bhsd_fp16_b16_h32_s8192_d128',
  'bhsd2bshd_fp16_b16_h32_s16384_d64',
  'bhsd2bshd_bf16_b16_h32_s8192_d128',
  'bshd2bhsd_bf16_b16_h32_s8192_d128',
  'bhsd2bshd_fp32_b8_h32_s8192_d128',
  'bshd2bhsd_fp32_b8_h32_s8192_d128',
  'transpose_fp16_m16384_n32768',
  'transpose_bf16_m32768_n16384',
  'transpose_fp32_m16384_n16384',
];

describe('permute bench cases', () => {
  const cases = PERMUTE_BENCH_PROBLEMS.map(permuteSuiteCase);

  it('keep the recorded names, in order', () => {
    expect(cases.map((c) => c.name)).toEqual(RECORDED_NAMES);
  });

  it("ask the server for REFERENCE_OPS.md permute: dtype, shape 'AxB…' of x, perm 'i,j,…' taking x to our output", () => {
    PERMUTE_BENCH_PROBLEMS.forEach((p, i) => {
      const c = cases[i]!;
      const { input, output } = permuteShapes(p);
      expect(c.reference.op).toBe('permute');
      expect(Object.keys(c.reference.params).sort()).toEqual(['dtype', 'perm', 'shape']);
      expect(c.reference.params['dtype']).toBe(p.dtype);
      const shape = (c.reference.params['shape'] as string).split('x').map(Number);
      const perm = (c.reference.params['perm'] as string).split(',').map(Number);
      expect(shape).toEqual(input);
      expect(perm.map((axis) => shape[axis])).toEqual(output);
    });
    expect(cases[0]!.reference.params).toEqual({ dtype: 'fp16', shape: '16x32x8192x128', perm: '0,2,1,3' });
    expect(cases[7]!.reference.params).toEqual({ dtype: 'fp16', shape: '16384x32768', perm: '1,0' });
  });

  it('judge y exactly against torch-contiguous; seeds are the name hash, unique across the suite', () => {
    for (const c of cases) {
      expect(c.precision).toEqual({ y: 'exact' });
      expect(c.errorBaselines).toEqual(['torch-contiguous']);
      expect(c.seed).toBe(caseSeed(c.name));
    }
    expect(new Set(cases.map((c) => c.seed)).size).toBe(cases.length);
  });

  it('read back the problem each case was made from', () => {
    PERMUTE_BENCH_PROBLEMS.forEach((p, i) => expect(permuteCaseProblem(cases[i]!)).toEqual(p));
  });
});
