import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { seqstartsOf } from './seqstartsOf.ts';

describe('seqstartsOf', () => {
  it('starts at 0 and steps by each length', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1 << 20), { maxLength: 40 }), (lens) => {
        const s = seqstartsOf(lens);
        expect(s).toHaveLength(lens.length + 1);
        expect(s[0]).toBe(0);
        lens.forEach((l, i) => expect(s[i + 1]! - s[i]!).toBe(l));
      }),
    );
  });

  it('matches a hand-written case', () => {
    expect(seqstartsOf([1, 17, 259, 0, 4097])).toEqual([0, 1, 18, 277, 277, 4374]);
  });

  it('rejects negative and fractional lengths, naming the entry', () => {
    expect(() => seqstartsOf([3, -1])).toThrow(ArgumentError);
    expect(() => seqstartsOf([3, 1.5])).toThrow(/lengths\[1\]/);
  });
});
