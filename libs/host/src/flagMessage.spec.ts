import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ruleOf, withoutEcho } from './flagMessage.ts';

describe('withoutEcho / ruleOf', () => {
  it('no (got <value>) clause survives, quoted or not; other clauses do', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), (value, rule) => {
        const message = new ArgumentError('mask', `${rule} (got 7)`, value).message;
        const out = ruleOf(new ArgumentError('mask', `${rule} (got 7)`, value), value);
        expect(out).not.toContain(` (got ${JSON.stringify(value)})`);
        expect(withoutEcho(`${message} (got ${value})`, value)).not.toContain(` (got ${value})`);
        if (value !== '7') expect(out).toContain('(got 7)');
      }),
    );
  });

  it('golden: a nested echo (the fmha mask rule) and the argument prefix go', () => {
    const inner = new ArgumentError('mask', 'must be 0, 1, 2, t or b', 'zz');
    const outer = new ArgumentError('problem.mask', `must be a valid mask (${inner.message})`, 'zz');
    expect(ruleOf(outer, 'zz')).toBe('must be a valid mask (mask: must be 0, 1, 2, t or b)');
    expect(ruleOf(new ArgumentError('problem.batch', 'must be an integer in [1, 65535]', 0), '0')).toBe('must be an integer in [1, 65535]');
    expect(ruleOf(new ArgumentError('problem.nheadK', 'must divide nheadQ = 6', 4), '3')).toBe('must divide nheadQ = 6 (got 4)');
  });
});
