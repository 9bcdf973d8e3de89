import { ArgParser } from '@tilekit/host';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ExampleArgParser, redeclareFlags } from './exampleArgParser.ts';

const shared = new ArgParser('shared')
  .int('b', 2, 'batch', { min: 1 })
  .float('scale', 0, 'scale', { min: 0, max: 4 })
  .string('s', '64', 'lengths', (t) => {
    if (!/^\d+$/.test(t)) throw new ArgumentError('s', 'must be digits', t);
  })
  .bool('lse', false, 'lse')
  .choice('prec', 'fp16', ['fp16', 'bf16'], 'dtype');

describe('redeclareFlags / ExampleArgParser', () => {
  it('redeclares every flag in order with its kind, bounds, check, choices and description; only the given defaults change', () => {
    const parser = redeclareFlags(shared, new ExampleArgParser('probe', 'a probe', 'footer line'), { b: 1, prec: 'bf16' });
    const strip = (p: ArgParser<object>) =>
      p.flags().map(({ check, defaultValue: _default, ...rest }) => ({ ...rest, check: check !== undefined }));
    expect(strip(parser)).toEqual(strip(shared));
    expect(parser.flags().map((f) => f.defaultValue)).toEqual([1, 0, '64', false, 'bf16']);
    const args = parser.parse(['-s=17']);
    expect([args.get('b'), args.get('s'), args.get('prec'), args.given('b'), args.given('s')]).toEqual([1, '17', 'bf16', false, true]);
    expect(() => parser.parse(['-s=x'])).toThrow(/-s=x: must be digits/);
    expect(() => parser.parse(['-scale=5'])).toThrow(/-scale=5: must be at most 4/);
  });

  it("a default the flag's own rules reject is a programming error", () => {
    expect(() => redeclareFlags(shared, new ArgParser('probe'), { b: 0 })).toThrow(ArgumentError);
    expect(() => redeclareFlags(shared, new ArgParser('probe'), { s: 'x' })).toThrow(/default must pass/);
  });

  it('the help text ends with the footer line', () => {
    const help = new ExampleArgParser('probe', 'a probe', 'backward: later').int('x', 1, 'x').help();
    expect(help.split('\n').at(-1)).toBe('backward: later');
    expect(help).toMatch(/^-x +int +1 +x$/m);
  });
});
