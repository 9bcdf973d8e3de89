import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArgumentError } from '@tilekit/numeric';
import { DuplicateNameError } from './errors.ts';
import { NameScope, reservedWords } from './nameScope.ts';

describe('NameScope', () => {
  it('hands out base, base_1, base_2, ...', () => {
    const s = new NameScope();
    expect([s.fresh('i'), s.fresh('i'), s.fresh('i'), s.fresh('j')]).toEqual(['i', 'i_1', 'i_2', 'j']);
  });

  it('avoids keywords, builtins and names already taken (including base_n taken verbatim)', () => {
    const s = new NameScope();
    expect(s.fresh('int')).toBe('int_1');
    expect(s.fresh('threadIdx')).toBe('threadIdx_1');
    s.reserve('t_1');
    expect([s.fresh('t'), s.fresh('t')]).toEqual(['t', 't_2']);
  });

  it('never shadows an enclosing name; siblings may reuse names', () => {
    const outer = new NameScope();
    outer.fresh('v');
    const a = outer.child();
    const b = outer.child();
    expect(a.fresh('v')).toBe('v_1');
    expect(a.fresh('w')).toBe('w');
    expect(b.fresh('w')).toBe('w');
  });

  it('reserves exact names and rejects invalid or reserved ones with typed errors', () => {
    const s = new NameScope();
    s.reserve('kernel');
    expect(() => s.reserve('kernel')).toThrow(DuplicateNameError);
    expect(() => s.reserve('for')).toThrow(ArgumentError);
    expect(() => s.fresh('a b')).toThrow(ArgumentError);
    expect(() => s.fresh('__x')).toThrow(/reserved/);
    expect(() => s.fresh('_X')).toThrow(/reserved/);
    try {
      s.reserve('kernel');
    } catch (e) {
      expect((e as DuplicateNameError).code).toBe('codegen/duplicate-name');
    }
  });

  it('fresh names are distinct, valid identifiers, never reserved', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('i', 'j', 'i_1', 'tmp', 'int', 'min', 'x_2', 'x'), { maxLength: 40 }), (bases) => {
        const s = new NameScope();
        const names = bases.map((b) => s.fresh(b));
        expect(new Set(names).size).toBe(names.length);
        for (const n of names) {
          expect(n).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
          expect(reservedWords.has(n)).toBe(false);
        }
      }),
    );
  });
});
