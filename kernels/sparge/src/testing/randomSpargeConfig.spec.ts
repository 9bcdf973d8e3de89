import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SPARGE_RANDOM_DEFAULT_RUNS,
  SPARGE_RANDOM_DEFAULT_SEED,
  SPARGE_RANDOM_MAX_COST,
  SPARGE_RANDOM_SEQLENS,
  checkSpargeRandomProblem,
  fitSpargeSequencesToCost,
  spargeRandomCost,
  spargeRandomProblemArb,
  spargeRandomProblems,
  spargeRandomSequencesArb,
} from './randomSpargeConfig.ts';

const defaultDraw = () => spargeRandomProblems(SPARGE_RANDOM_DEFAULT_SEED, SPARGE_RANDOM_DEFAULT_RUNS);

describe('spargeRandomProblemArb', () => {
  it('draws problems that plan, pass the block-map checks and suit their attention instance, within the cost bound, as one JSON line', () => {
    fc.assert(
      fc.property(spargeRandomProblemArb, (p) => {
        const plan = checkSpargeRandomProblem(p);
        expect(plan.instance.policy.pipeline).toBe(p.pipeline);
        expect(spargeRandomCost(p)).toBeLessThanOrEqual(SPARGE_RANDOM_MAX_COST);
        const line = JSON.stringify(p);
        expect(line).not.toContain('\n');
        expect(JSON.parse(line)).toEqual(p);
      }),
      { numRuns: 300 },
    );
  });

  it('draws the same problems from the same seed, and others from another', () => {
    expect(spargeRandomProblems(7, 20)).toEqual(spargeRandomProblems(7, 20));
    expect(spargeRandomProblems(8, 20)).not.toEqual(spargeRandomProblems(7, 20));
  });

  it('the default draw covers dtypes, head dims, modes, layouts, GQA, empty sequences and every hyperparameter choice', () => {
    const plans = defaultDraw().map((p) => ({ p, plan: checkSpargeRandomProblem(p) }));
    const seen = <T>(f: (x: (typeof plans)[number]) => T): Set<T> => new Set(plans.map(f));
    expect(seen(({ p }) => p.dtype)).toEqual(new Set(['fp16', 'bf16']));
    expect(seen(({ p }) => p.hdimQ)).toEqual(new Set([64, 128]));
    expect(seen(({ plan }) => plan.attention.mode)).toEqual(new Set(['batch', 'group']));
    expect(seen(({ p }) => `${p.inputLayout}>${p.outputLayout}`).size).toBe(4);
    expect(seen(({ p }) => p.nheadQ / p.nheadK!)).toEqual(new Set([1, 2, 3, 4]));
    expect(plans.some(({ plan: { attention: a } }) => a.mode === 'group' && a.seqstartQ.some((s, b) => s === a.seqstartQ[b + 1]))).toBe(
      true,
    );
    expect(seen(({ p }) => p.pipeline)).toEqual(new Set(['vsa', 'jenga']));
    expect(seen(({ p }) => p.pvMode)).toEqual(new Set(['none', 'warp', 'block']));
    expect(seen(({ plan }) => plan.params.selection)).toEqual(new Set(['topk', 'cdf']));
    for (const key of ['isCausal', 'int8', 'smoothK', 'attentionSink'] as const)
      expect(seen(({ plan }) => plan.params[key])).toEqual(new Set([true, false]));
    expect(seen(({ plan }) => plan.params.tailBlockRule)).toEqual(new Set(['pooled', 'upstreamFix']));
    expect(seen(({ p }) => p.lse)).toEqual(new Set([true, false]));
    expect(plans.some(({ p }) => p.pvMode !== 'none' && p.params.pvThreshold !== undefined)).toBe(true);
  });

  it('the default draw keeps the CPU reference cheap: on average at most 40% of the bound', () => {
    const costs = defaultDraw().map(spargeRandomCost);
    expect(costs.reduce((a, b) => a + b, 0) / costs.length).toBeLessThanOrEqual(0.4 * SPARGE_RANDOM_MAX_COST);
  });
});

describe('fitSpargeSequencesToCost', () => {
  it('returns lengths of the set, each at most the drawn one, within the bound unless every length is 1', () => {
    fc.assert(
      fc.property(spargeRandomSequencesArb, fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 1_000_000 }), (s, heads, cap) => {
        const fitted = fitSpargeSequencesToCost(s, heads, 128, cap);
        const all = [...fitted.sq, ...fitted.sk];
        expect(all.every((l) => SPARGE_RANDOM_SEQLENS.includes(l))).toBe(true);
        fitted.sq.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sq[b]!));
        fitted.sk.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sk[b]!));
        const cost = (s.group ? 1 : s.batch) * heads * 128 * fitted.sq.reduce((sum, q, b) => sum + q * fitted.sk[b]!, 0);
        expect(cost <= cap || all.every((l) => l <= 1)).toBe(true);
      }),
    );
  });
});
