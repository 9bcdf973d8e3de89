import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ArgParser } from './argParser.ts';
import { flagErrorOf } from './flagErrorOf.ts';

const parser = new ArgParser('t').int('n', 4, 'count').string('s', '1,2', 'lengths');
const FLAG_OF = { 'problem.n': 'n', 'problem.seqstart': 's' } as const;

describe('flagErrorOf', () => {
  it('names the flag and its value for a mapped argument, array elements included', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.nat(99), (n, i) => {
        const args = parser.parse([`-n=${n}`]);
        const e = flagErrorOf(args, new ArgumentError('problem.n', 'must be positive', n), FLAG_OF);
        expect([e.flag, e.message.startsWith(`-n=${n}: `)]).toEqual(['-n', true]);
        expect(flagErrorOf(args, new ArgumentError(`problem.seqstart[${i}]`, 'must not decrease'), FLAG_OF).flag).toBe('-s');
      }),
    );
  });

  it('keeps the argument of an unmapped error', () => {
    const e = flagErrorOf(parser.parse([]), new ArgumentError('problem.other', 'is wrong'), FLAG_OF);
    expect(e.flag).toBe('problem.other');
  });
});
