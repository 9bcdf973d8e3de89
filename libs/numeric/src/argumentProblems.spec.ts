import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArgumentProblems } from './argumentProblems.ts';
import { ArgumentError, TilekitError, type ArgumentProblem } from './tilekitError.ts';

class TestError extends ArgumentError {}

const problemArb: fc.Arbitrary<ArgumentProblem> = fc.record({
  argument: fc.stringMatching(/^[a-z][a-zA-Z.[\]0-9]{0,10}$/),
  rule: fc.string({ minLength: 1, maxLength: 20 }),
  found: fc.oneof(fc.integer(), fc.string(), fc.constant(undefined)),
});

describe('ArgumentError', () => {
  it('a single problem keeps the one-clause message, argument and code', () => {
    const e = new ArgumentError('problem.m', 'must be an integer in [1, 8]', 0);
    expect(e).toMatchObject({
      code: 'argument/invalid',
      argument: 'problem.m',
      message: 'problem.m: must be an integer in [1, 8] (got 0)',
      problems: [{ argument: 'problem.m', rule: 'must be an integer in [1, 8]', found: 0 }],
    });
    expect(new ArgumentError('x', 'must be given').message).toBe('x: must be given');
  });

  it('a problem list gives one clause per problem, the first argument as `argument`', () => {
    fc.assert(
      fc.property(fc.array(problemArb, { minLength: 1, maxLength: 6 }), (problems) => {
        const e = new TestError(problems);
        expect(e).toBeInstanceOf(TestError);
        expect(e).toBeInstanceOf(TilekitError);
        expect(e.name).toBe('TestError');
        expect(e.argument).toBe(problems[0]!.argument);
        expect(e.problems).toEqual(problems);
        for (const p of problems) expect(e.message).toContain(`${p.argument}: ${p.rule}`);
        if (problems.length > 1) expect(e.message.startsWith(`${problems.length} problems: `)).toBe(true);
        else expect(e.message).toBe(new TestError(problems[0]!.argument, problems[0]!.rule, problems[0]!.found).message);
      }),
    );
    expect(() => new ArgumentError([])).toThrow(RangeError);
  });
});

describe('ArgumentProblems', () => {
  it('reports k problems for k failing independent checks, in order, and nothing for none', () => {
    fc.assert(
      fc.property(fc.array(fc.option(problemArb, { nil: undefined }), { maxLength: 8 }), (plan) => {
        const v = new ArgumentProblems(TestError);
        const values = plan.map((p, i) =>
          v.check(() => {
            if (p !== undefined) throw new TestError(p.argument, p.rule, p.found);
            return i;
          }),
        );
        const failing = plan.filter((p) => p !== undefined);
        expect(values).toEqual(plan.map((p, i) => (p === undefined ? i : undefined)));
        expect(v.problems).toEqual(failing);
        if (failing.length === 0) {
          expect(() => v.throwIfAny()).not.toThrow();
          return;
        }
        let thrown: unknown;
        try {
          v.throwIfAny();
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(TestError);
        expect((thrown as TestError).problems).toEqual(failing);
        expect((thrown as TestError).argument).toBe(failing[0]!.argument);
      }),
    );
  });

  it('rethrows a single recorded error unchanged, flattens nested lists and never swallows other errors', () => {
    class OtherError extends ArgumentError {}
    const single = new ArgumentProblems(TestError);
    const original = new OtherError('a', 'must be 1', 2);
    single.check(() => {
      throw original;
    });
    expect(() => single.throwIfAny()).toThrow(original);

    const nested = new ArgumentProblems(TestError);
    nested.check(() => {
      throw new OtherError([
        { argument: 'a', rule: 'r1' },
        { argument: 'b', rule: 'r2' },
      ]);
    });
    nested.report('c', 'r3', 3);
    expect(nested.problems.map((p) => p.argument)).toEqual(['a', 'b', 'c']);
    expect(() => nested.throwIfAny()).toThrow(
      expect.objectContaining({ name: 'TestError', message: '3 problems: a: r1; b: r2; c: r3 (got 3)' }),
    );

    const bug = new ArgumentProblems(TestError);
    expect(() =>
      bug.check(() => {
        throw new TypeError('a bug');
      }),
    ).toThrow(TypeError);
    expect(bug.isEmpty).toBe(true);
  });
});
