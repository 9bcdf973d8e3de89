import { planSparge } from '@tilekit/kernel-sparge';
import { describe, expect, it } from 'vitest';
import { spargeProblemOf } from './sparge.ts';
import { spargeBlockMapProblemOfPlan } from './spargeInt8Readback.ts';

describe('spargeBlockMapProblemOfPlan', () => {
  it("is the runner's block-map problem: the plan's shape and packed bhsd strides, the params with 128-row blocks", () => {
    const problem = spargeProblemOf({ b: 2, h: 3, s: 384, d: 64, topk: 0.4, causal: false, int8: true, pvMode: 'none', pvThreshold: 50 });
    const got = spargeBlockMapProblemOfPlan(planSparge(problem), problem.params);
    expect(got).toEqual({
      dtype: 'fp16',
      headDim: 64,
      batch: 2,
      nhead: 3,
      nheadK: 3,
      seqlenQ: 384,
      seqlenK: 384,
      qStrides: { batch: 3 * 384 * 64, head: 384 * 64, row: 64 },
      kStrides: { batch: 3 * 384 * 64, head: 384 * 64, row: 64 },
      params: { ...problem.params, blockQ: 128, blockK: 128 },
    });
  });

  it('rejects a group-mode plan', () => {
    const plan = planSparge({
      dtype: 'fp16',
      batch: 2,
      nheadQ: 1,
      hdimQ: 64,
      seqstartQ: [0, 200, 384],
      seqstartK: [0, 200, 384],
      params: { topk: 0.5, int8: true },
    });
    expect(() => spargeBlockMapProblemOfPlan(plan, { topk: 0.5, int8: true })).toThrow(/batch mode only/);
  });
});
