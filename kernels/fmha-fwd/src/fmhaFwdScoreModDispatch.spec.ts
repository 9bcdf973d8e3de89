// CI (no GPU): a problem with a score modifier is checked (kind, one pass), planned onto the
// score-modifier catalog's instance of its mask and modifier, and a problem without one never
// lands on a modifier instance.
import { checkFmhaFwdProblem, FmhaFwdArgumentError } from '@tilekit/fmha';
import { fmhaFwdTestProblem as problem } from '@tilekit/fmha/testing';
import { describe, expect, it } from 'vitest';
import { selectFmhaFwdInstance, NoFmhaFwdInstanceError } from './fmhaFwdDispatch.ts';
import { planFmhaFwd } from './fmhaFwdRunner.ts';

describe('forward dispatch with a score modifier', () => {
  it('selects the instance of the modifier and mask; without one, a dense instance', () => {
    for (const scoreModifier of ['softcap', 'alibi'] as const) {
      for (const mask of ['0', 't'] as const) {
        const plan = planFmhaFwd(problem({ scoreModifier, mask, splitKv: 'auto' }));
        expect(plan.instance.policy.scoreModifier?.tag).toBe(scoreModifier);
        expect(plan.instance.policy.mask).toBe(mask === '0' ? 'none' : 'window');
        expect(plan.problem.numSplits).toBe(1);
        expect(plan.combine).toBeUndefined();
      }
    }
    expect(selectFmhaFwdInstance(problem()).policy.scoreModifier).toBeUndefined();
  });

  it('rejects an unknown modifier and split-KV with a modifier, naming the field; a d64 modifier problem has no instance', () => {
    expect(() => checkFmhaFwdProblem({ ...base(), scoreModifier: 'bias' as never })).toThrow(FmhaFwdArgumentError);
    expect(() => checkFmhaFwdProblem({ ...base(), scoreModifier: 'bias' as never })).toThrow(/problem\.scoreModifier|scoreModifier/);
    expect(() => checkFmhaFwdProblem({ ...base(), scoreModifier: 'softcap', splitKv: 2 })).toThrow(/splitKv/);
    expect(() => selectFmhaFwdInstance(problem({ scoreModifier: 'softcap', hdimQ: 64 }))).toThrow(NoFmhaFwdInstanceError);
  });
});

function base() {
  return { dtype: 'fp16' as const, batch: 1, nheadQ: 2, hdimQ: 128, seqlenQ: 17, seqlenK: 17 };
}
