import { describe, expect, it } from 'vitest';
import { caseSeed } from './caseSeed.ts';
import { DSA_BENCH_CASES, dsaMlaBenchSpecs, dsaMlaFlops, dsaMlaSpecOf, dsaMlaSuiteCase, dsaMlaValidEntries } from './dsaCases.ts';

describe('dsa bench cases', () => {
  it('are the prefill s_q 4096 over L 32K and 128K, then the decode b 1 / 32 / 128 × s_q 1 / 2 over the same L (topk 2048, h_q 128)', () => {
    const names = DSA_BENCH_CASES.map((c) => c.name);
    expect(names.slice(0, 2)).toEqual(['prefill_s4096_L32768_topk2048_h128', 'prefill_s4096_L131072_topk2048_h128']);
    expect(names.slice(2, -2)).toEqual(
      [32768, 131072].flatMap((L) => [1, 32, 128].flatMap((b) => [1, 2].map((sQ) => `decode_b${b}_sq${sQ}_L${L}_topk2048_h128`))),
    );
    expect(names.slice(-2)).toEqual(['step_b1_sq1_L131072_topk2048_h128', 'step_b32_sq1_L131072_topk2048_h128']);
  });

  it("record issue 21's params: mode, b, s_q, L (tokens), h_q, topk", () => {
    expect(DSA_BENCH_CASES[1]!.params).toEqual({ mode: 'prefill', b: 1, s_q: 4096, L: 131072, h_q: 128, topk: 2048 });
    expect(DSA_BENCH_CASES.at(-3)!.params).toEqual({ mode: 'decode', b: 128, s_q: 2, L: 131072, h_q: 128, topk: 2048 });
    expect(DSA_BENCH_CASES.at(-1)!.params).toEqual({ mode: 'step', b: 32, s_q: 1, L: 131072, h_q: 128, topk: 2048 });
  });

  it('ask the server for REFERENCE_OPS.md dsa_sparse_mla_decode for a decode case (one s_kv-token cache shared by the b sequences)', () => {
    expect(DSA_BENCH_CASES.at(-3)!.reference).toEqual({
      op: 'dsa_sparse_mla_decode',
      params: { b: 128, s_q: 2, s_kv: 131072, h_q: 128, topk: 2048, sm_scale: 0.135234 },
    });
    const decode = dsaMlaBenchSpecs().find((x) => x.mode === 'decode')!;
    expect(dsaMlaValidEntries(decode)).toBe(2048);
    expect(dsaMlaValidEntries({ ...decode, b: 32, sQ: 2 })).toBe(64 * 2048);
  });

  it("ask the server for REFERENCE_OPS.md dsa_sparse_mla_prefill with DeepSeek-V3.2's sm_scale; judge out (bf16) and lse against torch-gather", () => {
    const c = DSA_BENCH_CASES[1]!;
    expect(c.reference).toEqual({
      op: 'dsa_sparse_mla_prefill',
      params: { s_q: 4096, s_kv: 131072, h_q: 128, topk: 2048, sm_scale: 0.135234 },
    });
    expect(c.precision).toEqual({ out: 'bf16', lse: 'fp32' });
    expect(c.errorBaselines).toEqual(['torch-gather']);
    expect(c.seed).toBe(caseSeed(c.name));
    expect(new Set(DSA_BENCH_CASES.map((x) => x.seed)).size).toBe(DSA_BENCH_CASES.length);
  });

  it('count FLOPs as FlashMLA does: 2·Σvalid·h_q·(576 + 512); 2.34 PFLOP… per 4096-query case', () => {
    expect(dsaMlaFlops(1, 1)).toBe(2176);
    expect(dsaMlaFlops(10, 64)).toBe(2 * 10 * 64 * 1088);
    const [spec] = dsaMlaBenchSpecs();
    expect(dsaMlaValidEntries(spec!)).toBe(4096 * 2048);
    expect(dsaMlaFlops(dsaMlaValidEntries(spec!), 128)).toBe(2 * 4096 * 2048 * 128 * 1088);
    expect(dsaMlaValidEntries({ ...spec!, L: 100 })).toBe(4096 * 100);
  });

  it('read their specs back from the params, and refuse a mode not measured here or a malformed param', () => {
    for (const [i, spec] of dsaMlaBenchSpecs().entries()) expect(dsaMlaSpecOf(DSA_BENCH_CASES[i]!)).toEqual(spec);
    const c = dsaMlaSuiteCase({ mode: 'prefill', sQ: 8, L: 256, hQ: 64, topk: 16 });
    expect(dsaMlaSpecOf(c)).toEqual({ mode: 'prefill', sQ: 8, L: 256, hQ: 64, topk: 16 });
    expect(dsaMlaSpecOf({ ...c, params: { ...c.params, mode: 'decode', b: 3 } })).toEqual({
      mode: 'decode',
      b: 3,
      sQ: 8,
      L: 256,
      hQ: 64,
      topk: 16,
    });
    expect(() => dsaMlaSpecOf({ ...c, params: { ...c.params, mode: 'step' } })).toThrow(/not a sparse MLA call/);
    expect(() => dsaMlaSpecOf({ ...c, params: { ...c.params, topk: 0 } })).toThrow(/params.topk must be a positive integer/);
    expect(() => dsaMlaSpecOf({ ...c, params: { ...c.params, b: 2 } })).toThrow(/b = 1/);
  });
});
