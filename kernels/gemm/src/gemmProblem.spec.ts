import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkGemmProblem, type GemmProblem } from './gemmProblem.ts';

const base: GemmProblem = { dtype: 'fp16', m: 64, n: 64, k: 64, batch: 2 };

/** The arguments of every problem `p` is rejected for (empty when it is accepted). */
function problemArguments(p: unknown): string[] {
  try {
    checkGemmProblem(p as GemmProblem);
  } catch (e) {
    expect(e).toBeInstanceOf(ArgumentError);
    const err = e as ArgumentError;
    expect(err.argument).toBe(err.problems[0]!.argument);
    if (err.problems.length > 1) expect(err.message.startsWith(`${err.problems.length} problems: `)).toBe(true);
    return err.problems.map((x) => x.argument);
  }
  return [];
}

describe('checkGemmProblem', () => {
  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    // [argument, change, the arguments whose violation skips this check (it compares against them)]
    const violations: readonly (readonly [string, Partial<Record<keyof GemmProblem, unknown>>, readonly string[]])[] = [
      ['problem.dtype', { dtype: 'fp32' }, []],
      ['problem.layout', { layout: 'tc' }, []],
      ['problem.m', { m: 0 }, []],
      ['problem.n', { n: 2 ** 21 }, []],
      ['problem.k', { k: 1.5 }, []],
      ['problem.lda', { lda: 32 }, ['problem.layout', 'problem.k']],
      ['problem.ldb', { ldb: 0 }, []],
      ['problem.ldc', { ldc: 32 }, ['problem.n']],
      ['problem.batch', { batch: 0 }, []],
      ['problem.batchStrideA', { batchStrideA: -1 }, []],
      ['problem.batchStrideC', { batchStrideC: 100 }, ['problem.m', 'problem.n', 'problem.ldc', 'problem.batch']],
      ['problem.alpha', { alpha: Number.NaN }, []],
      ['problem.bias', { bias: 1 }, []],
      ['problem.activation', { activation: 'gelu' }, []],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        expect(problemArguments(Object.assign({}, base, ...chosen.map(([, change]) => change)))).toEqual(expected);
      }),
    );
  });

  it('lists the problems in one message, one clause each', () => {
    expect(() => checkGemmProblem({ dtype: 'fp16', m: 0, n: 8, k: 8, lda: 4, bias: 'yes' as never })).toThrow(
      '3 problems: problem.m: must be an integer in [1, 1048576] (got 0); problem.lda: must be at least k = 8 (A is row-major M×K in layout tn) (got 4); problem.bias: must be a boolean (got "yes")',
    );
  });
});
