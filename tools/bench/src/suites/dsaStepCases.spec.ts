import { describe, expect, it } from 'vitest';
import { caseSeed } from './caseSeed.ts';
import { DSA_STEP_BENCH_CASES, dsaStepBenchSpecs, dsaStepSpecOf, dsaStepSuiteCase } from './dsaStepCases.ts';
import { dsaStepPages, dsaStepPositions } from './dsaStepRun.ts';

describe('dsa step bench cases', () => {
  it('are the decode step at 128K context for b 1 and 32 (one query, 64 index heads, 128 heads, top-2048)', () => {
    expect(DSA_STEP_BENCH_CASES.map((c) => c.name)).toEqual(['step_b1_sq1_L131072_topk2048_h128', 'step_b32_sq1_L131072_topk2048_h128']);
    expect(DSA_STEP_BENCH_CASES[1]!.params).toEqual({ mode: 'step', b: 32, s_q: 1, L: 131072, h_q: 128, topk: 2048 });
  });

  it('ask the server for REFERENCE_OPS.md dsa_decode_step; judge logits, out and lse against torch-gather', () => {
    const c = DSA_STEP_BENCH_CASES[0]!;
    expect(c.reference).toEqual({
      op: 'dsa_decode_step',
      params: { b: 1, s_q: 1, L: 131072, h: 64, h_q: 128, topk: 2048, sm_scale: 0.135234 },
    });
    expect(c.precision).toEqual({ logits: 'fp32', out: 'bf16', lse: 'fp32' });
    expect(c.errorBaselines).toEqual(['torch-gather']);
    expect(c.seed).toBe(caseSeed(c.name));
  });

  it('read their specs back, and refuse another mode or a malformed param', () => {
    for (const [i, spec] of dsaStepBenchSpecs().entries()) expect(dsaStepSpecOf(DSA_STEP_BENCH_CASES[i]!)).toEqual(spec);
    const c = dsaStepSuiteCase({ mode: 'step', b: 3, sQ: 2, L: 640, indexHeads: 32, hQ: 64, topk: 16 });
    expect(dsaStepSpecOf(c)).toEqual({ mode: 'step', b: 3, sQ: 2, L: 640, indexHeads: 32, hQ: 64, topk: 16 });
    expect(() => dsaStepSpecOf({ ...c, params: { ...c.params, mode: 'decode' } })).toThrow(/not a step/);
    expect(() => dsaStepSpecOf({ ...c, params: { ...c.params, L: 0 } })).toThrow(/params.L must be a positive integer/);
    expect(() => dsaStepSpecOf({ ...c, reference: { ...c.reference, params: {} } })).toThrow(/params.h/);
  });

  it('a case has every sequence its own pages of both caches, plus a spare one', () => {
    expect(dsaStepPages(dsaStepBenchSpecs()[1]!)).toEqual({ maxPages: 2048, numPages: 32 * 2048 + 1 });
  });

  it("turn slots back into each row's context positions through its sequence's block-table row", () => {
    // 2 sequences of 2 pages: sequence 0 owns pages 3, 0; sequence 1 owns pages 1, 4; topk 3, one query each.
    const table = Int32Array.from([3, 0, 1, 4]);
    const slots = Int32Array.from([3 * 64 + 5, 0 * 64 + 1, -1, 4 * 64 + 63, 1 * 64, 3 * 64]);
    expect(Array.from(dsaStepPositions(slots, table, 2, 1, 3))).toEqual([5, 64 + 1, -1, 64 + 63, 0, -2]);
    // Two queries per sequence: rows 0 and 1 are sequence 0's, rows 2 and 3 sequence 1's.
    expect(Array.from(dsaStepPositions(Int32Array.from([0, 64, 4 * 64 + 2, 1 * 64 + 2]), table, 2, 2, 1))).toEqual([64, -2, 66, 2]);
  });
});
