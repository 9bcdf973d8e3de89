import { describe, expect, it } from 'vitest';
import { SDPA_ERROR_BASELINES, SDPA_VARLEN_ERROR_BASELINES } from './attentionBaselines.ts';
import { caseSeed } from './caseSeed.ts';
import { FMHA_BWD_BENCH_CASES, FMHA_BWD_VARLEN_SEQLENS, fmhaBwdTensorFiles } from './fmhaBwdCases.ts';

/** The names of the recorded results (benchmarks/results/fmha-bwd.json), in order: the history is keyed by them. */
const RECORDED_NAMES = [
  ...['', '_det'].flatMap((det) =>
    [64, 128].flatMap((d) => ['', '_causal'].map((causal) => `fmha_bwd_b2_h16_s8192_d${d}${causal}_fp16${det}`)),
  ),
  'fmha_bwd_varlen8_h16_d128_causal_fp16',
  'fmha_bwd_varlen8_h16_d128_causal_fp16_det',
];

/** REFERENCE_OPS.md's attention_bwd params: attention_fwd's (bhsd only), varlen with `seqlens` (q = k) instead of sq, sk. */
const BATCH_PARAMS = ['b', 'causal', 'd', 'dtype', 'dv', 'h', 'hk', 'layout', 'sk', 'sq'];
const VARLEN_PARAMS = ['b', 'causal', 'd', 'dtype', 'dv', 'h', 'hk', 'seqlens'];

describe('fmha-bwd bench cases', () => {
  it('keep the names of the recorded results, in order; our params keep determinism', () => {
    expect(FMHA_BWD_BENCH_CASES.map((c) => c.name)).toEqual(RECORDED_NAMES);
    for (const c of FMHA_BWD_BENCH_CASES) expect(c.params['deterministic']).toBe(c.shape.deterministic);
    expect(FMHA_BWD_BENCH_CASES.at(-1)!.params['seqlens']).toBe('8192,4097,2048,1000,259,17,1,4096');
  });

  it("send attention_bwd exactly REFERENCE_OPS.md's params: bhsd with sq = sk, or varlen `seqlens` (b entries)", () => {
    for (const c of FMHA_BWD_BENCH_CASES) {
      const p = c.reference.params;
      expect(c.reference.op).toBe('attention_bwd');
      const varlen = c.shape.seqlens !== undefined;
      expect(Object.keys(p).sort()).toEqual(varlen ? VARLEN_PARAMS : BATCH_PARAMS);
      expect(p).toMatchObject({ dtype: 'fp16', b: c.shape.b, h: 16, hk: 16, d: c.shape.d, dv: c.shape.d, causal: c.shape.causal });
      if (varlen) expect(p['seqlens']).toEqual([...FMHA_BWD_VARLEN_SEQLENS]);
      else expect(p).toMatchObject({ sq: 8192, sk: 8192, layout: 'bhsd' });
    }
    expect((FMHA_BWD_BENCH_CASES.at(-1)!.reference.params['seqlens'] as number[]).length).toBe(FMHA_BWD_BENCH_CASES.at(-1)!.shape.b);
  });

  it("seeds are the shapes' name hashes: the atomic and deterministic forms of a shape share inputs, other shapes differ", () => {
    const seeds = FMHA_BWD_BENCH_CASES.map((c) => c.seed);
    expect(new Set(seeds).size).toBe(seeds.length / 2);
    for (const c of FMHA_BWD_BENCH_CASES) expect(c.seed).toBe(caseSeed(c.name.replace(/_det$/, '')));
  });

  it('dQ, dK, dV are judged at the input dtype against the SDPA backends (varlen: then their looped forms)', () => {
    for (const c of FMHA_BWD_BENCH_CASES) {
      expect(c.precision).toEqual({ dq: 'fp16', dk: 'fp16', dv: 'fp16' });
      expect(c.errorBaselines).toEqual(c.shape.seqlens !== undefined ? SDPA_VARLEN_ERROR_BASELINES : SDPA_ERROR_BASELINES);
    }
    expect(SDPA_VARLEN_ERROR_BASELINES.slice(3)).toEqual(['torch-flash-looped', 'torch-cudnn-looped', 'torch-efficient-looped']);
  });

  it('tensor files: q, k, v, do and dq, dk, dv all (b, h, s, d), varlen (Σs, h, d)', () => {
    const dense = fmhaBwdTensorFiles(FMHA_BWD_BENCH_CASES[1]!.shape);
    for (const name of ['q', 'k', 'v', 'do', 'dq', 'dk', 'dv'] as const) expect(dense[name].shape).toEqual([2, 16, 8192, 64]);
    const varlen = fmhaBwdTensorFiles(FMHA_BWD_BENCH_CASES.at(-1)!.shape);
    expect(varlen.dq.shape).toEqual([19710, 16, 128]);
    expect(varlen.do.dtype).toBe('fp16');
  });
});
