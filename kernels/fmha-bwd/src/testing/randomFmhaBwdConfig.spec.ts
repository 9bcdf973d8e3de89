import { formatAttentionMaskSpec, checkFmhaBwdProblem } from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FMHA_BWD_HEAD_DIMS } from '../fmhaBwdCatalog.ts';
import {
  FMHA_BWD_RANDOM_DEFAULT_RUNS,
  FMHA_BWD_RANDOM_DEFAULT_SEED,
  FMHA_BWD_RANDOM_MAX_COST,
  FMHA_BWD_RANDOM_SEQLENS,
  fitBwdSequencesToCost,
  fmhaBwdRandomCost,
  fmhaBwdRandomKernelSet,
  fmhaBwdRandomProblemArb,
  fmhaBwdRandomProblems,
  fmhaBwdRandomSequencesArb,
} from './randomFmhaBwdConfig.ts';

const defaultDraw = () => fmhaBwdRandomProblems(FMHA_BWD_RANDOM_DEFAULT_SEED, FMHA_BWD_RANDOM_DEFAULT_RUNS);

describe('fmhaBwdRandomProblemArb', () => {
  it(
    'draws problems that pass checkFmhaBwdProblem and select kernels of their dtype and head ' +
      'dim (132 and 114 SMs), within the cost bound, as one JSON line',
    () => {
      fc.assert(
        fc.property(fmhaBwdRandomProblemArb, (p) => {
          const checked = checkFmhaBwdProblem(p);
          for (const smCount of [132, 114]) {
            const set = fmhaBwdRandomKernelSet(p, smCount);
            expect([set.dqDkDv.policy.dtype, set.dqDkDv.policy.headDim]).toEqual([checked.dtype, checked.hdimQ]);
          }
          expect(fmhaBwdRandomCost(p)).toBeLessThanOrEqual(FMHA_BWD_RANDOM_MAX_COST);
          const line = JSON.stringify(p);
          expect(line).not.toContain('\n');
          expect(JSON.parse(line)).toEqual(p);
        }),
        { numRuns: 300 },
      );
    },
  );

  it('draws the same problems from the same seed, and others from another', () => {
    expect(fmhaBwdRandomProblems(7, 20)).toEqual(fmhaBwdRandomProblems(7, 20));
    expect(fmhaBwdRandomProblems(8, 20)).not.toEqual(fmhaBwdRandomProblems(7, 20));
  });

  it('the default draw covers every dtype, head dim, mask kind, mode, layout, GQA, empty sequences and dQ mode', () => {
    const checked = defaultDraw().map(checkFmhaBwdProblem);
    const seen = <T>(f: (p: (typeof checked)[number]) => T): Set<T> => new Set(checked.map(f));
    expect(seen((p) => p.dtype)).toEqual(new Set(['fp16', 'bf16']));
    expect(seen((p) => p.hdimQ)).toEqual(new Set(FMHA_BWD_HEAD_DIMS));
    expect(seen((p) => formatAttentionMaskSpec(p.mask).replace(/:.*/, ':window'))).toEqual(
      new Set(['0', 't', 'b', 't:window', 'b:window']),
    );
    expect(seen((p) => p.mode)).toEqual(new Set(['batch', 'group']));
    expect(seen((p) => `${p.inputLayout}>${p.outputLayout}`).size).toBe(4);
    expect(seen((p) => p.nheadQ / p.nheadK)).toEqual(new Set([1, 2, 3, 4]));
    expect(checked.some((p) => p.mode === 'group' && p.seqstartQ.some((s, b) => s === p.seqstartQ[b + 1]))).toBe(true);
    expect(checked.some((p) => p.mode === 'group' && p.seqstartK.some((s, b) => s === p.seqstartK[b + 1]))).toBe(true);
    expect(seen((p) => `${p.deterministic} ${p.mode}`)).toEqual(new Set(['true batch', 'true group', 'false batch', 'false group']));
  });

  it('the default draw keeps the CPU reference cheap: on average at most half the bound (~25 ms in node)', () => {
    const costs = defaultDraw().map(fmhaBwdRandomCost);
    expect(costs.reduce((a, b) => a + b, 0) / costs.length).toBeLessThanOrEqual(0.5 * FMHA_BWD_RANDOM_MAX_COST);
  });
});

describe('fitBwdSequencesToCost', () => {
  it('returns lengths of the set, each at most the drawn one, within the bound unless every length is 1', () => {
    fc.assert(
      fc.property(fmhaBwdRandomSequencesArb, fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 1_000_000 }), (s, heads, cap) => {
        const fitted = fitBwdSequencesToCost(s, heads, 128, cap);
        const all = [...fitted.sq, ...fitted.sk];
        expect(all.every((l) => FMHA_BWD_RANDOM_SEQLENS.includes(l))).toBe(true);
        fitted.sq.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sq[b]!));
        fitted.sk.forEach((l, b) => expect(l).toBeLessThanOrEqual(s.sk[b]!));
        const cost = (s.group ? 1 : s.batch) * heads * 128 * fitted.sq.reduce((sum, q, b) => sum + q * fitted.sk[b]!, 0);
        expect(cost <= cap || all.every((l) => l <= 1)).toBe(true);
      }),
    );
  });
});
