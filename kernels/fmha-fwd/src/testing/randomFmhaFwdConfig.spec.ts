import { formatAttentionMaskSpec, FMHA_FWD_HEAD_DIMS, checkFmhaFwdProblem } from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planFmhaFwd } from '../fmhaFwdRunner.ts';
import {
  FMHA_FWD_RANDOM_DEFAULT_RUNS,
  FMHA_FWD_RANDOM_DEFAULT_SEED,
  FMHA_FWD_RANDOM_MAX_COST,
  FMHA_FWD_RANDOM_SEQLENS,
  fitSequencesToCost,
  fmhaFwdRandomCost,
  fmhaFwdRandomProblemArb,
  fmhaFwdRandomProblems,
  fmhaFwdRandomSequencesArb,
} from './randomFmhaFwdConfig.ts';

const defaultDraw = () => fmhaFwdRandomProblems(FMHA_FWD_RANDOM_DEFAULT_SEED, FMHA_FWD_RANDOM_DEFAULT_RUNS);

describe('fmhaFwdRandomProblemArb', () => {
  it('draws problems that pass checkFmhaFwdProblem and plan to an instance (132 and 114 SMs), within the cost bound, as one JSON line', () => {
    fc.assert(
      fc.property(fmhaFwdRandomProblemArb, (p) => {
        const checked = checkFmhaFwdProblem(p);
        for (const smCount of [132, 114]) expect(planFmhaFwd(checked, { smCount }).instance.policy.dtype).toBe(p.dtype);
        expect(fmhaFwdRandomCost(p)).toBeLessThanOrEqual(FMHA_FWD_RANDOM_MAX_COST);
        const line = JSON.stringify(p);
        expect(line).not.toContain('\n');
        expect(JSON.parse(line)).toEqual(p);
      }),
      { numRuns: 300 },
    );
  });

  it('draws the same problems from the same seed, and others from another', () => {
    expect(fmhaFwdRandomProblems(7, 20)).toEqual(fmhaFwdRandomProblems(7, 20));
    expect(fmhaFwdRandomProblems(8, 20)).not.toEqual(fmhaFwdRandomProblems(7, 20));
  });

  it('the default draw covers every dtype, head dims, mask kind, mode, layout, GQA, empty sequences, LSE and split-KV choice', () => {
    const draws = defaultDraw();
    const checked = draws.map((d) => checkFmhaFwdProblem(d));
    const seen = <T>(f: (i: number) => T): Set<T> => new Set(draws.map((_, i) => f(i)));
    expect(seen((i) => checked[i]!.dtype)).toEqual(new Set(['fp16', 'bf16']));
    expect(seen((i) => `${checked[i]!.hdimQ}/${checked[i]!.hdimV}`)).toEqual(
      new Set(FMHA_FWD_HEAD_DIMS.map((d) => `${d.hdimQ}/${d.hdimV}`)),
    );
    const masks = seen((i) => formatAttentionMaskSpec(checked[i]!.mask).replace(/:.*/, ':window'));
    expect(masks).toEqual(new Set(['0', 't', 'b', 't:window', 'b:window']));
    expect(seen((i) => checked[i]!.mode)).toEqual(new Set(['batch', 'group']));
    expect(seen((i) => `${checked[i]!.inputLayout}>${checked[i]!.outputLayout}`).size).toBe(4);
    expect(seen((i) => checked[i]!.nheadQ / checked[i]!.nheadK)).toEqual(new Set([1, 2, 3, 4]));
    expect(checked.some((p) => p.mode === 'group' && p.seqstartQ.some((s, b) => s === p.seqstartQ[b + 1]))).toBe(true);
    expect(checked.some((p) => p.hasSeqlenK)).toBe(true);
    expect(seen((i) => checked[i]!.lse)).toEqual(new Set([true, false]));
    const splits = checked.map((p) => planFmhaFwd(p, { smCount: 132 }).problem.numSplits);
    expect(splits.some((s) => s === 1) && splits.some((s) => s > 1)).toBe(true);
    expect(checked.some((p) => p.splitKvAuto)).toBe(true);
  });

  it('the default draw keeps the CPU reference cheap: on average at most 40% of the bound (~10 ms in node)', () => {
    const costs = defaultDraw().map(fmhaFwdRandomCost);
    expect(costs.reduce((a, b) => a + b, 0) / costs.length).toBeLessThanOrEqual(0.4 * FMHA_FWD_RANDOM_MAX_COST);
  });
});

describe('fitSequencesToCost', () => {
  it('returns lengths of the set, each at most the drawn one, within the bound unless every length is 1', () => {
    fc.assert(
      fc.property(fmhaFwdRandomSequencesArb, fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 1_000_000 }), (s, heads, cap) => {
        const fitted = fitSequencesToCost(s, heads, 64, cap);
        const all = [...fitted.sq, ...fitted.sk];
        expect(all.every((l) => FMHA_FWD_RANDOM_SEQLENS.includes(l))).toBe(true);
        fitted.sq.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sq[b]!));
        fitted.sk.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sk[b]!));
        const cost = (s.group ? 1 : s.batch) * heads * 64 * fitted.sq.reduce((sum, q, b) => sum + q * fitted.sk[b]!, 0);
        expect(cost <= cap || all.every((l) => l <= 1)).toBe(true);
      }),
    );
  });
});
