// checkFfpaBwdProblem and ffpaBwdKernelSet: FFPA's head-dim pairs pass (and pick their dq_dk_dv,
// dot_do_o and convert_dq with matching records), every other rule breaks with a typed error
// naming problem.<field>; a property: any pair outside FFPA_HEAD_DIMS is rejected.
import { checkFmhaBwdTraits, FmhaBwdArgumentError, fmhaBwdTraitsOf, fmhaBwdTripleMismatches } from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';
import { checkFfpaBwdProblem, type FfpaBwdProblem } from './checkFfpaBwdProblem.ts';
import { ffpaBwdKernelSet } from './ffpaBwdKernelSet.ts';

const base: FfpaBwdProblem = { dtype: 'bf16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 512, seqlenQ: 100, seqlenK: 130, mask: 't' };

function argumentOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FmhaBwdArgumentError);
    return (e as FmhaBwdArgumentError).argument;
  }
  throw new Error('no error');
}

describe('checkFfpaBwdProblem', () => {
  it('every FFPA head-dim pair, dtype and mask kind: checked, and its kernels match the launcher’s traits', () => {
    for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
      for (const dtype of ['fp16', 'bf16'] as const)
        for (const mask of [undefined, 't', 'b:40,3']) {
          const p = checkFfpaBwdProblem({ ...base, dtype, hdimQ, hdimV, mask: mask ?? '0' });
          const set = ffpaBwdKernelSet(p);
          expect(set.dqDkDv.policy).toMatchObject({ dtype, headDim: hdimQ, headDimV: hdimV, mask: mask === undefined ? 'none' : 'window' });
          expect([set.dotDoO.policy.headDimV, set.convertDq.policy.headDim]).toEqual([hdimV, hdimQ]);
          expect(fmhaBwdTripleMismatches(set.triple, checkFmhaBwdTraits(fmhaBwdTraitsOf(p)))).toEqual([]);
          expect(set.triple.dqDkDv).toMatchObject({ dqAccumulation: 'atomic', kN0: 64, name: set.dqDkDv.name });
        }
  });

  it('typed errors naming the field: head dims, determinism (a boolean), score modifiers, generic masks, strides', () => {
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, hdimQ: 256 }))).toBe('problem.hdimQ');
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, hdimQ: 512, hdimV: 448 }))).toBe('problem.hdimQ');
    expect(checkFfpaBwdProblem({ ...base, deterministic: true }).deterministic).toBe(true);
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, deterministic: 1 } as unknown as FfpaBwdProblem))).toBe('problem.deterministic');
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, scoreModifier: 'softcap' } as unknown as FfpaBwdProblem))).toBe(
      'problem.scoreModifier',
    );
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, mask: 'g:10,20' }))).toBe('problem.mask');
    const odd = { q: { row: 516, head: 516 * 100, batch: 516 * 100 * 4 } };
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, strides: odd } as unknown as FfpaBwdProblem))).toMatch(/^problem\.strides\.q\./);
    expect(argumentOf(() => checkFfpaBwdProblem({ ...base, nheadK: 3 }))).toMatch(/^problem\./);
  });

  it('property: a head-dim pair outside FFPA_HEAD_DIMS is rejected naming problem.hdimQ', () => {
    const ffpa = new Set(FFPA_HEAD_DIMS.map((h) => `${h.hdimQ}/${h.hdimV}`));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 16 }), (a, b) => {
        const [hdimQ, hdimV] = [64 * a, 64 * b];
        fc.pre(!ffpa.has(`${hdimQ}/${hdimV}`));
        expect(argumentOf(() => checkFfpaBwdProblem({ ...base, hdimQ, hdimV }))).toBe('problem.hdimQ');
      }),
    );
  });
});
