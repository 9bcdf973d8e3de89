import { describe, expect, it } from 'vitest';
import { attentionForwardFlops } from '../flops.ts';
import { FMHA_FWD_BENCH_CASES, FMHA_FWD_VARLEN_SEQLENS, fmhaFwdBenchCase, fmhaFwdBenchFlops } from './fmhaFwdCases.ts';

describe('fmha-fwd bench cases', () => {
  it("cover the issue's shapes with unique names in docs/benchmarks.md's style", () => {
    const names = FMHA_FWD_BENCH_CASES.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const dtype of ['fp16', 'bf16'])
      for (const d of [64, 128, 256])
        for (const causal of ['', '_causal']) expect(names).toContain(`fmha_fwd_b2_h16_s8192_d${d}${causal}_${dtype}`);
    expect(names).toContain('fmha_fwd_b2_h16_s16384_d128_fp16');
    expect(names).toContain('fmha_fwd_b2_h32_hk8_s8192_d128_fp16');
    expect(names).toContain('fmha_fwd_varlen8_h16_d128_fp16');
    for (const sq of [1, 16, 64]) expect(names).toContain(`fmha_fwd_b4_h32_hk8_sq${sq}_sk32768_d128_fp16`);
    expect(FMHA_FWD_VARLEN_SEQLENS).toContain(1);
    // The names of the recorded results stay what they were.
    for (const n of ['fmha_fwd_b2_h16_s8192_d64_fp16', 'fmha_fwd_b2_h16_s16384_d128_causal_fp16', 'fmha_fwd_b2_h32_hk8_s8192_d128_fp16'])
      expect(names).toContain(n);
  });

  it('flops: 4·b·h·s²·d, halved when causal; varlen sums its sequences; torch gets the same shape', () => {
    const c = FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b2_h16_s8192_d128_causal_fp16')!;
    expect(c.flops).toBe((4 * 2 * 16 * 8192 * 8192 * 128) / 2);
    expect(c.torch).toEqual({
      op: 'fmha_fwd',
      params: { dtype: 'fp16', b: 2, h: 16, hk: 16, d: 128, dv: 128, causal: true, sq: 8192, sk: 8192, layout: 'bhsd', seed: 1 },
    });
    const v = fmhaFwdBenchCase({ dtype: 'bf16', b: 3, h: 2, hk: 1, d: 64, dv: 64, causal: true, seqlensQ: [5, 7, 0], seqlensK: [5, 9, 4] });
    expect(v.flops).toBe((2 * 2 * 25 * 128) / 2 + 2 * 2 * 63 * 128);
    expect(v.params['seqlensQ']).toBe('5,7,0');
    expect(v.torch.params['seqlens_k']).toEqual([5, 9, 4]);
    const decode = FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b4_h32_hk8_sq16_sk32768_d128_fp16')!;
    expect(decode.flops).toBe(attentionForwardFlops({ b: 4, h: 32, sq: 16, sk: 32768, dQk: 128, causal: false }));
    expect(fmhaFwdBenchFlops({ dtype: 'fp16', b: 1, h: 1, hk: 1, d: 192, dv: 128, causal: false, sq: 3, sk: 5 })).toBe(2 * 15 * 320);
  });
});
