import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { findPermuteInstance } from './permuteCatalog.ts';
import { preparePermuteLaunch } from './permuteLauncher.ts';
import { checkPermuteProblem, type PermuteProblem } from './permuteProblem.ts';

/** The arguments of every problem `run` is rejected for (empty when it is accepted). */
function problemArguments(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ArgumentError);
    const err = e as ArgumentError;
    expect(err.argument).toBe(err.problems[0]!.argument);
    return err.problems.map((x) => x.argument);
  }
  return [];
}

describe('checkPermuteProblem', () => {
  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    const base = { kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 4, s: 16, d: 64 };
    // [argument, change, the arguments whose violation skips this check (the sizes depend on the kind)]
    const violations: readonly (readonly [string, Record<string, unknown>, readonly string[]])[] = [
      ['problem.kind', { kind: 'swap' }, []],
      ['problem.dtype', { dtype: 'fp8' }, []],
      ['problem.b', { b: 0 }, ['problem.kind']],
      ['problem.h', { h: 1.5 }, ['problem.kind']],
      ['problem.s', { s: -1 }, ['problem.kind']],
      ['problem.d', { d: '64' }, ['problem.kind']],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        const p = Object.assign({}, base, ...chosen.map(([, change]) => change)) as PermuteProblem;
        expect(problemArguments(() => checkPermuteProblem(p))).toEqual(expected);
      }),
    );
    expect(problemArguments(() => checkPermuteProblem({ kind: 'transpose', dtype: 'fp32', m: 0, n: 0 }))).toEqual([
      'problem.m',
      'problem.n',
    ]);
  });

  it('the launcher reports every buffer problem together', () => {
    const instance = findPermuteInstance('permute_head_fp16_v16_t256_u2_r2')!;
    const problem: PermuteProblem = { kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 4, s: 16, d: 64 };
    const bytes = 2 * 4 * 16 * 64 * 2;
    expect(
      problemArguments(() =>
        preparePermuteLaunch(instance, problem, { src: { ptr: 0x1000n, bytes: 1 }, dst: { ptr: 0x100000n, bytes: 2 } }),
      ),
    ).toEqual(['src', 'dst']);
    expect(
      problemArguments(() => preparePermuteLaunch(instance, problem, { src: { ptr: 0x1008n, bytes }, dst: { ptr: 0x1010n, bytes } })),
    ).toEqual(['problem', 'dst']);
  });
});
