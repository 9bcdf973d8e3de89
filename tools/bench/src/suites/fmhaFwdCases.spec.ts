import { describe, expect, it } from 'vitest';
import { attentionForwardFlops } from '../flops.ts';
import { SDPA_ERROR_BASELINES } from './attentionBaselines.ts';
import { caseSeed } from './caseSeed.ts';
import { FMHA_FWD_BENCH_CASES, FMHA_FWD_VARLEN_SEQLENS, fmhaFwdBenchCase, fmhaFwdBenchFlops, fmhaFwdTensorFiles } from './fmhaFwdCases.ts';

/** The names of the recorded results (benchmarks/results/fmha-fwd.json), in order: the history is keyed by them. */
const RECORDED_NAMES = [
  ...['fp16', 'bf16'].flatMap((dtype) =>
    [64, 128, 256].flatMap((d) => ['', '_causal'].map((causal) => `fmha_fwd_b2_h16_s8192_d${d}${causal}_${dtype}`)),
  ),
  'fmha_fwd_b2_h16_s16384_d128_fp16',
  'fmha_fwd_b2_h16_s16384_d128_causal_fp16',
  'fmha_fwd_b2_h32_hk8_s8192_d128_fp16',
  'fmha_fwd_b2_h32_hk8_s8192_d128_causal_fp16',
  'fmha_fwd_varlen8_h16_d128_fp16',
  'fmha_fwd_varlen8_h16_d128_causal_fp16',
  ...[1, 16, 64].map((sq) => `fmha_fwd_b4_h32_hk8_sq${sq}_sk32768_d128_fp16`),
];

/** REFERENCE_OPS.md's attention_fwd params: batch mode with a layout, varlen with per-sequence lengths instead of sq, sk. */
const BATCH_PARAMS = ['b', 'causal', 'd', 'dtype', 'dv', 'h', 'hk', 'layout', 'sk', 'sq'];
const VARLEN_PARAMS = ['b', 'causal', 'd', 'dtype', 'dv', 'h', 'hk', 'seqlens_k', 'seqlens_q'];

describe('fmha-fwd bench cases', () => {
  it('keep the names of the recorded results, in order', () => {
    expect(FMHA_FWD_BENCH_CASES.map((c) => c.name)).toEqual(RECORDED_NAMES);
    expect(FMHA_FWD_VARLEN_SEQLENS).toContain(1);
  });

  it("send attention_fwd exactly REFERENCE_OPS.md's params: bhsd in batch mode, seqlens_q/seqlens_k (b entries) for varlen, causal only where sq = sk", () => {
    for (const c of FMHA_FWD_BENCH_CASES) {
      const p = c.reference.params;
      expect(c.reference.op).toBe('attention_fwd');
      const varlen = c.shape.seqlensQ !== undefined;
      expect(Object.keys(p).sort()).toEqual(varlen ? VARLEN_PARAMS : BATCH_PARAMS);
      expect(p).toMatchObject({
        dtype: c.shape.dtype,
        b: c.shape.b,
        h: c.shape.h,
        hk: c.shape.hk,
        d: c.shape.d,
        dv: c.shape.dv,
        causal: c.shape.causal,
      });
      if (varlen) {
        expect(p['seqlens_q']).toEqual(c.shape.seqlensQ);
        expect(p['seqlens_k']).toEqual(c.shape.seqlensK);
        expect((p['seqlens_q'] as number[]).length).toBe(c.shape.b);
        if (c.shape.causal) expect(p['seqlens_q']).toEqual(p['seqlens_k']);
      } else {
        expect(p).toMatchObject({ sq: c.shape.sq, sk: c.shape.sk, layout: 'bhsd' });
        if (c.shape.causal) expect(p['sq']).toBe(p['sk']);
      }
    }
    expect(FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b2_h16_s8192_d128_causal_fp16')!.reference.params).toEqual({
      dtype: 'fp16',
      b: 2,
      h: 16,
      hk: 16,
      sq: 8192,
      sk: 8192,
      d: 128,
      dv: 128,
      causal: true,
      layout: 'bhsd',
    });
  });

  it("seeds are the names' hashes: unique and stable", () => {
    const seeds = FMHA_FWD_BENCH_CASES.map((c) => c.seed);
    expect(new Set(seeds).size).toBe(seeds.length);
    for (const c of FMHA_FWD_BENCH_CASES) expect(c.seed).toBe(caseSeed(c.name));
    expect(fmhaFwdBenchCase(FMHA_FWD_BENCH_CASES[3]!.shape).seed).toBe(FMHA_FWD_BENCH_CASES[3]!.seed);
  });

  it('O is judged at the input dtype against the SDPA backends (varlen: then their looped forms)', () => {
    for (const c of FMHA_FWD_BENCH_CASES) {
      expect(c.precision).toEqual({ o: c.shape.dtype });
      const looped = SDPA_ERROR_BASELINES.map((n) => `${n}-looped`);
      expect(c.errorBaselines).toEqual(c.shape.seqlensQ !== undefined ? [...SDPA_ERROR_BASELINES, ...looped] : SDPA_ERROR_BASELINES);
    }
    expect(SDPA_ERROR_BASELINES).toEqual(['torch-flash', 'torch-cudnn', 'torch-efficient']);
  });

  it('tensor files: q, k, v, o in bhsd (GQA: hk heads for k, v), varlen (Σs, h, d)', () => {
    const gqa = fmhaFwdTensorFiles(FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b4_h32_hk8_sq16_sk32768_d128_fp16')!.shape);
    expect([gqa.q.shape, gqa.k.shape, gqa.v.shape, gqa.o.shape]).toEqual([
      [4, 32, 16, 128],
      [4, 8, 32768, 128],
      [4, 8, 32768, 128],
      [4, 32, 16, 128],
    ]);
    const v = fmhaFwdTensorFiles({
      dtype: 'bf16',
      b: 3,
      h: 4,
      hk: 2,
      d: 192,
      dv: 128,
      causal: false,
      seqlensQ: [5, 0, 9],
      seqlensK: [5, 3, 9],
    });
    expect([v.q.shape, v.k.shape, v.v.shape, v.o.shape]).toEqual([
      [14, 4, 192],
      [17, 2, 192],
      [17, 2, 128],
      [14, 4, 128],
    ]);
    expect(v.o.dtype).toBe('bf16');
  });

  it('flops: 4·b·h·s²·d, halved when causal; varlen sums its sequences', () => {
    const c = FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b2_h16_s8192_d128_causal_fp16')!;
    expect(c.flops).toBe((4 * 2 * 16 * 8192 * 8192 * 128) / 2);
    const v = fmhaFwdBenchCase({ dtype: 'bf16', b: 3, h: 2, hk: 1, d: 64, dv: 64, causal: true, seqlensQ: [5, 7, 0], seqlensK: [5, 9, 4] });
    expect(v.flops).toBe((2 * 2 * 25 * 128) / 2 + 2 * 2 * 63 * 128);
    expect(v.params['seqlensQ']).toBe('5,7,0');
    expect(v.reference.params['seqlens_k']).toEqual([5, 9, 4]);
    const decode = FMHA_FWD_BENCH_CASES.find((x) => x.name === 'fmha_fwd_b4_h32_hk8_sq16_sk32768_d128_fp16')!;
    expect(decode.flops).toBe(attentionForwardFlops({ b: 4, h: 32, sq: 16, sk: 32768, dQk: 128, causal: false }));
    expect(fmhaFwdBenchFlops({ dtype: 'fp16', b: 1, h: 1, hk: 1, d: 192, dv: 128, causal: false, sq: 3, sk: 5 })).toBe(2 * 15 * 320);
  });
});
