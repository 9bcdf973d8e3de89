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

describe('flagErrorOf messages', () => {
  const args = parser.parse(['-n=0', '-s=1,x']);

  it('state the flag and its value once: the mapped argument and the echo are dropped', () => {
    const e = flagErrorOf(args, new ArgumentError('problem.n', 'must be an integer in [1, 65535]', 0), FLAG_OF);
    expect(e.message).toBe('-n=0: must be an integer in [1, 65535]');
    const element = flagErrorOf(args, new ArgumentError('problem.seqstart[2]', 'must not decrease', 1), FLAG_OF);
    expect(element.message).toBe('-s=1,x: problem.seqstart[2]: must not decrease (got 1)');
  });

  it('an error listing several problems names each flag, in one line', () => {
    const problems = [
      { argument: 'problem.n', rule: 'must be positive', found: 0 },
      { argument: 'problem.other', rule: 'is wrong', found: 'q' },
      { argument: 'problem.seqstart', rule: 'must be a list', found: '1,x' },
    ];
    const error = Object.assign(new ArgumentError('problem.n', 'must be positive', 0), { problems });
    const e = flagErrorOf(args, error, FLAG_OF);
    expect(e.flag).toBe('-n');
    expect(e.message).toBe('3 problems: -n=0: must be positive; problem.other: is wrong (got "q"); -s=1,x: must be a list');
  });
});
