import { describe, expect, it } from 'vitest';
import { caseSeed } from './caseSeed.ts';
import {
  DSA_HBM_READ_BYTES,
  DSA_INDEXER_BENCH_CASES,
  dsaBenchSpecOf,
  dsaBenchSpecs,
  dsaDecodeBytesRead,
  dsaPrefillBytesMoved,
  dsaPrefillFlops,
  dsaPrefillWindowKeys,
  dsaPrefillWindows,
  dsaTopkBytesRead,
  hbmFractionOf,
} from './dsaIndexerCases.ts';

const DECODE_NAMES = [1, 32, 128].flatMap((b) =>
  [8192, 32768, 131072].flatMap((L) => ['indexer', 'topk', 'fused'].map((stage) => `decode_b${b}_L${L}_${stage}`)),
);

describe('dsa-indexer bench cases', () => {
  const cases = DSA_INDEXER_BENCH_CASES;

  it('are decode b 1/32/128 × L 8K/32K/128K × indexer, topk, fused, then prefill s 4096 × L 32K/128K', () => {
    expect(cases.map((c) => c.name)).toEqual([...DECODE_NAMES, 'prefill_s4096_L32768_indexer', 'prefill_s4096_L131072_indexer']);
  });

  it('record mode, stage, b, L (tokens) and the shape: h 64, next_n 1, page 64, k 2048 where a top-k runs; prefill b 1, s 4096', () => {
    expect(cases[0]!.params).toEqual({ mode: 'decode', stage: 'indexer', b: 1, L: 8192, h: 64, nextN: 1, page: 64 });
    expect(cases.find((c) => c.name === 'decode_b128_L131072_fused')!.params).toEqual({
      mode: 'decode',
      stage: 'fused',
      b: 128,
      L: 131072,
      h: 64,
      nextN: 1,
      page: 64,
      k: 2048,
    });
    expect(cases.at(-1)!.params).toEqual({ mode: 'prefill', stage: 'indexer', b: 1, L: 131072, s: 4096, h: 64 });
  });

  it('ask the server for REFERENCE_OPS.md dsa_indexer_decode (hbm-read of 4 GiB at the indexer stage) and dsa_indexer_prefill', () => {
    expect(cases[0]!.reference).toEqual({
      op: 'dsa_indexer_decode',
      params: { b: 1, L: 8192, h: 64, next_n: 1, k: 2048, page: 64, stage: 'indexer', hbm_read_bytes: DSA_HBM_READ_BYTES },
    });
    expect(DSA_HBM_READ_BYTES).toBe(4 * 2 ** 30);
    expect(cases[1]!.reference).toEqual({
      op: 'dsa_indexer_decode',
      params: { b: 1, L: 8192, h: 64, next_n: 1, k: 2048, page: 64, stage: 'topk' },
    });
    expect(cases.at(-2)!.reference).toEqual({ op: 'dsa_indexer_prefill', params: { s: 4096, L: 32768, h: 64, windows: 'causal' } });
  });

  it("share one seed among a (b, L)'s three stages (the same inputs; topk's logits are the indexer's reference), distinct otherwise", () => {
    for (let i = 0; i < DECODE_NAMES.length; i += 3) {
      const [indexer, topk, fused] = cases.slice(i, i + 3);
      expect(topk!.seed).toBe(indexer!.seed);
      expect(fused!.seed).toBe(indexer!.seed);
      expect(indexer!.seed).toBe(caseSeed(`decode_b${indexer!.params['b']}_L${indexer!.params['L']}`));
    }
    expect(new Set(cases.map((c) => c.seed)).size).toBe(9 + 2);
  });

  it('judge logits in fp32 against torch-bf16 first; topk values exactly against torch.topk; fused both', () => {
    const torch = ['torch-bf16', 'torch-fp8-rowwise', 'torch-fp8-tensorwise'];
    for (const c of cases) {
      const stage = c.params['stage'];
      if (stage === 'topk') {
        expect(c.precision).toEqual({ topk_values: 'exact' });
        expect(c.errorBaselines).toEqual(['torch-topk', 'torch-topk-unsorted']);
      } else {
        expect(c.precision).toEqual(stage === 'fused' ? { logits: 'fp32', topk_values: 'fp32' } : { logits: 'fp32' });
        expect(c.errorBaselines).toEqual(torch);
      }
    }
  });

  it('read back the spec each case was made from', () => {
    expect(cases.map(dsaBenchSpecOf)).toEqual(dsaBenchSpecs());
  });

  it('refuse params that are no case of the suite', () => {
    const c = cases[0]!;
    expect(() => dsaBenchSpecOf({ ...c, params: { ...c.params, mode: 'train' } })).toThrow(/mode train with stage indexer/);
    expect(() => dsaBenchSpecOf({ ...c, params: { ...c.params, b: 0 } })).toThrow(/params\.b must be a positive integer/);
    expect(() => dsaBenchSpecOf({ ...cases[1]!, params: { ...cases[1]!.params, k: undefined as unknown as number } })).toThrow(/params\.k/);
  });
});

describe('dsa-indexer figures', () => {
  it('decode reads 132 B per context token plus q, weights (132 B per head row), block table and context lengths', () => {
    expect(dsaDecodeBytesRead({ b: 1, L: 131072, h: 64, nextN: 1 })).toBe(131072 * 132 + 64 * 132 + 2048 * 4 + 4);
    expect(dsaDecodeBytesRead({ b: 32, L: 8192, h: 64, nextN: 1 })).toBe(32 * 8192 * 132 + 32 * 64 * 132 + 32 * 128 * 4 + 32 * 4);
    expect(dsaDecodeBytesRead({ b: 2, L: 100, h: 32, nextN: 2 })).toBe(2 * 100 * 132 + 4 * 32 * 132 + 2 * 2 * 4 + 2 * 4);
    // The bound: 132 B/token and a little per sequence (q, weights, its block table row).
    expect(dsaDecodeBytesRead({ b: 32, L: 131072, h: 64, nextN: 1 }) / (32 * 131072)).toBeCloseTo(
      132 + (64 * 132 + 2048 * 4 + 4) / 131072,
      12,
    );
  });

  it('top-k reads every fp32 logit once', () => {
    expect(dsaTopkBytesRead(128, 131072)).toBe(128 * 131072 * 4);
  });

  it('prefill windows are causal and end at L; FLOPs count 2·h·128 per query-key pair inside a window', () => {
    const { start, end } = dsaPrefillWindows(4, 10);
    expect([...start]).toEqual([0, 0, 0, 0]);
    expect([...end]).toEqual([7, 8, 9, 10]);
    expect(dsaPrefillWindowKeys({ s: 4, L: 10 })).toBe(7 + 8 + 9 + 10);
    for (const L of [32768, 131072]) {
      const w = dsaPrefillWindows(4096, L);
      const pairs = w.end.reduce((n, e, t) => n + e - w.start[t]!, 0);
      expect(dsaPrefillWindowKeys({ s: 4096, L })).toBe(pairs);
      expect(dsaPrefillFlops({ s: 4096, L, h: 64 })).toBe(2 * pairs * 64 * 128);
    }
    expect(dsaPrefillFlops({ s: 4096, L: 32768, h: 64 })).toBe(2 * (4096 * 28672 + (4096 * 4097) / 2) * 64 * 128);
    expect(() => dsaPrefillWindows(10, 4)).toThrow(RangeError);
  });

  it('prefill moves q and weights, keys and scales, the windows, and writes [s][L] fp32 logits', () => {
    expect(dsaPrefillBytesMoved({ s: 4096, L: 32768, h: 64 })).toBe(4096 * 64 * 132 + 32768 * 132 + 4096 * 8 + 4096 * 32768 * 4);
  });

  it('hbmFraction: ours.gbps over hbm-read GB/s; none when hbm-read failed or is absent', () => {
    const timing = { ms: 1, msMin: 1, msMax: 1, reps: [1], launchesPerRep: 1, errors: {} };
    expect(hbmFractionOf(2400, { 'hbm-read': { ...timing, gbps: 3000 } })).toBeCloseTo(0.8, 12);
    expect(hbmFractionOf(2400, { 'hbm-read': { error: 'RuntimeError: out of memory' } })).toBeUndefined();
    expect(hbmFractionOf(2400, { 'torch-bf16': { ...timing, gbps: 3000 } })).toBeUndefined();
  });
});
