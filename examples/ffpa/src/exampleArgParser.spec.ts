import { describe, expect, it } from 'vitest';
import { ExampleArgParser } from './exampleArgParser.ts';

describe('ExampleArgParser', () => {
  it('the help text ends with the footer line', () => {
    const help = new ExampleArgParser('probe', 'a probe', 'backward: later').int('x', 1, 'x').help();
    expect(help.split('\n').at(-1)).toBe('backward: later');
    expect(help).toMatch(/^-x +int +1 +x$/m);
  });
});
