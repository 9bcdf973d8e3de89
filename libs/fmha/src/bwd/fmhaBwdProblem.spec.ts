import fc from 'fast-check';
import type { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkFmhaBwdProblem, FmhaBwdArgumentError, type FmhaBwdProblem } from './fmhaBwdProblem.ts';

const base: FmhaBwdProblem = { dtype: 'fp16', batch: 2, nheadQ: 8, nheadK: 2, hdimQ: 128, seqlenQ: 100, seqlenK: 300 };

/** The arguments of every problem `p` is rejected for (empty when it is accepted). */
function problemArguments(p: unknown): string[] {
  try {
    checkFmhaBwdProblem(p as FmhaBwdProblem);
  } catch (e) {
    expect(e).toBeInstanceOf(FmhaBwdArgumentError);
    const err = e as ArgumentError;
    expect(err.argument).toBe(err.problems[0]!.argument);
    return err.problems.map((x) => x.argument);
  }
  return [];
}

describe('checkFmhaBwdProblem', () => {
  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    const shape = [
      'problem.batch',
      'problem.nheadQ',
      'problem.nheadK',
      'problem.hdimQ',
      'problem.hdimV',
      'problem.seqlenQ',
      'problem.seqlenK',
      'problem.inputLayout',
      'problem.outputLayout',
      'problem.strides.x',
    ];
    type Change = (p: Record<string, unknown>) => Record<string, unknown>;
    const set =
      (field: string, value: unknown): Change =>
      (p) => ({ ...p, [field]: value });
    const stride =
      (tensor: string, value: unknown): Change =>
      (p) => ({ ...p, strides: { ...(p['strides'] as object | undefined), [tensor]: value } });
    // [argument, change, the arguments whose violation skips this check (it compares against them)]
    const violations: readonly (readonly [string, Change, readonly string[]])[] = [
      ['problem.dtype', set('dtype', 'fp8'), []],
      ['problem.batch', set('batch', 0), []],
      ['problem.nheadQ', set('nheadQ', 65536), []],
      ['problem.nheadK', set('nheadK', 0), []],
      ['problem.hdimQ', set('hdimQ', 2000), []],
      ['problem.hdimV', set('hdimV', 0), []],
      ['problem.seqlenQ', set('seqlenQ', 0.5), []],
      ['problem.seqlenK', set('seqlenK', -3), []],
      ['problem.inputLayout', set('inputLayout', 'sbhd'), []],
      ['problem.outputLayout', set('outputLayout', 1), []],
      ['problem.strides.x', stride('x', {}), []],
      // In the order the checker walks the tensors (o before dK), as it reports them.
      ['problem.strides.o.row', stride('o', { batch: 1e7, head: 1e5, row: 1 }), shape],
      ['problem.strides.dK.head', stride('dK', { batch: 1e6, head: 300 * 128 - 1, row: 128 }), shape],
      ['problem.mask', set('mask', 'q'), []],
      ['problem.scale', set('scale', Number.NaN), []],
      ['problem.deterministic', set('deterministic', 'yes'), []],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        const p = chosen.reduce<Record<string, unknown>>((q, [, change]) => change(q), { ...base });
        expect(problemArguments(p)).toEqual(expected);
      }),
    );
  });

  it('group mode: both seqstarts problems and the stray seqlens are reported together', () => {
    const p = { dtype: 'fp16', batch: 2, nheadQ: 2, hdimQ: 64, seqlenQ: 3, seqlenK: 4, seqstartQ: [0, 5, 4], seqstartK: [1, 2, 3] };
    expect(problemArguments(p)).toEqual(['problem.seqlenQ', 'problem.seqlenK', 'problem.seqstartQ', 'problem.seqstartK[0]']);
    expect(problemArguments({ ...p, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [0, 'a', -1], seqstartK: [0, 1, 2] })).toEqual([
      'problem.seqstartQ[1]',
      'problem.seqstartQ[2]',
    ]);
    // An invalid batch does not hide the starts' own problems.
    expect(problemArguments({ ...p, batch: 0, seqlenQ: undefined, seqlenK: undefined, seqstartK: [0, 1] })).toEqual([
      'problem.batch',
      'problem.seqstartQ',
    ]);
    expect(() => checkFmhaBwdProblem({ ...base, nheadK: 3, hdimQ: 0 })).toThrow(
      '2 problems: problem.nheadK: must divide nheadQ = 8 (GQA/MQA: nheadQ % nheadK == 0) (got 3); problem.hdimQ: must be an integer in [1, 1024] (got 0)',
    );
  });
});
