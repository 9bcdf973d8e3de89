import { describe, expect, it } from 'vitest';
import { include, orderRequirements, snippet } from './requirement.ts';

describe('requirements', () => {
  it('order dependencies first and drop repeats', () => {
    const a = snippet('a', ['// a'], [include('<cstdint>')]);
    const b = snippet('b', ['// b'], [a]);
    const order = orderRequirements([b, include('<cstdio>'), a, include('<cstdint>')]).map((r) =>
      r.kind === 'include' ? r.header : r.name,
    );
    expect(order).toEqual(['<cstdint>', 'a', 'b', '<cstdio>']);
  });

  it('refuse two different snippets under one name', () => {
    expect(() => orderRequirements([snippet('x', ['int a;']), snippet('x', ['int b;'])])).toThrow(/two different snippets/);
  });
});
