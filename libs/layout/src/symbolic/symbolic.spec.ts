import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { floorDivInt, modInt, xorInt } from '../integerMath.ts';
import {
  add,
  ceilDiv,
  divisorOf,
  evaluateSymInt,
  floorDiv,
  formatSymInt,
  indexVar,
  intervalOf,
  isStatic,
  mod,
  mul,
  proveLessThan,
  sub,
  symbol,
  xor,
  type Bindings,
  type SymInt,
} from './index.ts';

const s = symbol('s', { min: 1, max: 40 });
const t = symbol('t', { min: 2, max: 9 });
const w = symbol('w', { min: 4, max: 64, multipleOf: 4 });

const bindingsArb = fc.record({
  s: fc.integer({ min: 1, max: 40 }),
  t: fc.integer({ min: 2, max: 9 }),
  w: fc.integer({ min: 1, max: 16 }).map((x) => 4 * x),
});

type Node = { expr: SymInt; eval: (b: Bindings) => number };

const z = (v: number): number => (v === 0 ? 0 : v);

const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.integer({ min: -20, max: 20 }).map((n) => ({ expr: n, eval: () => n })),
  fc.constantFrom(s, t, w).map((x) => ({ expr: x, eval: (b: Bindings) => evaluateSymInt(x, b) })),
);

const positive = (n: Node): Node => ({ expr: add(mul(n.expr, n.expr), 1), eval: (b) => n.eval(b) ** 2 + 1 });

const exprArb: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => ({ expr: add(a.expr, b.expr), eval: (x: Bindings) => a.eval(x) + b.eval(x) })),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => ({ expr: sub(a.expr, b.expr), eval: (x: Bindings) => a.eval(x) - b.eval(x) })),
    fc.tuple(tie('node'), leaf).map(([a, b]) => ({ expr: mul(a.expr, b.expr), eval: (x: Bindings) => a.eval(x) * b.eval(x) })),
    fc.tuple(tie('node'), leaf).map(([a, b0]) => {
      const b = positive(b0);
      return { expr: floorDiv(a.expr, b.expr), eval: (x: Bindings) => floorDivInt(a.eval(x), b.eval(x)) };
    }),
    fc.tuple(tie('node'), leaf).map(([a, b0]) => {
      const b = positive(b0);
      return { expr: mod(a.expr, b.expr), eval: (x: Bindings) => modInt(a.eval(x), b.eval(x)) };
    }),
    fc
      .tuple(tie('node'), fc.constantFrom(1, 2, 3, 4, 8, 16))
      .map(([a, c]) => ({ expr: floorDiv(a.expr, c), eval: (x: Bindings) => floorDivInt(a.eval(x), c) })),
    fc
      .tuple(tie('node'), fc.constantFrom(1, 2, 3, 4, 8, 16))
      .map(([a, c]) => ({ expr: mod(a.expr, c), eval: (x: Bindings) => modInt(a.eval(x), c) })),
    fc
      .tuple(tie('node'), fc.integer({ min: 0, max: 7 }))
      .map(([a, k]) => ({ expr: xor(a.expr, k), eval: (x: Bindings) => xorInt(a.eval(x), k) })),
  ),
})).node;

describe('SymInt canonical form', () => {
  test.prop([exprArb, bindingsArb])('evaluating the simplified expression equals evaluating the operations', (n, b) => {
    expect(evaluateSymInt(n.expr, b)).toBe(z(n.eval(b)));
  });

  test.prop([exprArb, bindingsArb])('the honest interval contains every value', (n, b) => {
    const i = intervalOf(n.expr);
    const v = n.eval(b);
    expect(i.lo).toBeLessThanOrEqual(v);
    expect(i.hi).toBeGreaterThanOrEqual(v);
  });

  test.prop([exprArb, bindingsArb])('divisorOf divides every value', (n, b) => {
    const d = divisorOf(n.expr);
    const v = n.eval(b);
    if (d === 0) expect(z(v)).toBe(0);
    else expect(modInt(v, d)).toBe(0);
  });

  test.prop([exprArb, exprArb])('addition is commutative and cancels', (a, b) => {
    expect(formatSymInt(add(a.expr, b.expr))).toBe(formatSymInt(add(b.expr, a.expr)));
    expect(sub(add(a.expr, b.expr), b.expr)).toEqual(a.expr);
  });

  it('folds constants and prints readably', () => {
    expect(add(2, 3)).toBe(5);
    expect(mul(s, 0)).toBe(0);
    expect(isStatic(sub(s, s))).toBe(true);
    expect(formatSymInt(add(mul(2, s), mul(s, t), -1))).toBe('2*s + s*t - 1');
    expect(formatSymInt(floorDiv(add(mul(8, s), 3), 8))).toBe('s');
    expect(formatSymInt(mod(add(mul(8, s), 11), 8))).toBe('3');
    expect(formatSymInt(mod(add(mul(9, s), 1), 4))).toBe('mod(s + 1, 4)');
    expect(formatSymInt(floorDiv(floorDiv(s, 2), 3))).toBe('floorDiv(s, 6)');
    expect(formatSymInt(ceilDiv(s, 64))).toBe('floorDiv(s + 63, 64)');
    expect(formatSymInt(mod(w, 4))).toBe('mod(w, 4)'); // multipleOf is a domain fact, not a coefficient
    expect(divisorOf(mul(w, 3))).toBe(12);
  });

  it('uses index extents: merge ∘ unmerge cancels symbolically', () => {
    const L1 = symbol('L1', { min: 1, max: 1000 });
    const u0 = indexVar('u0', { min: 0, max: 99, extent: 100 });
    const u1 = indexVar('u1', { min: 0, max: 999, extent: L1 });
    const low = add(mul(u0, L1), u1); // unmerge(100, L1)
    expect(mod(low, L1)).toEqual(u1);
    expect(floorDiv(low, L1)).toEqual(u0);
    expect(proveLessThan(u1, L1)).toBe(true);
    expect(proveLessThan(u1, sub(L1, 1))).toBe(false);
    const m = mod(s, 8);
    expect(floorDiv(m, 8)).toBe(0);
    expect(mod(m, 8)).toEqual(m);
    expect(mod(m, 4)).toEqual(mod(s, 4));
  });

  it('rejects divisors that are not provably ≥ 1 and bindings outside the domain', () => {
    const z = symbol('z', { min: 0, max: 5 });
    expect(() => floorDiv(s, z)).toThrow(expect.objectContaining({ code: 'layout/non-positive-divisor' }));
    expect(() => evaluateSymInt(s, { s: 0 })).toThrow(expect.objectContaining({ code: 'layout/binding-out-of-domain' }));
    expect(() => evaluateSymInt(w, { w: 6 })).toThrow(expect.objectContaining({ code: 'layout/binding-out-of-domain' }));
    expect(() => evaluateSymInt(s, {})).toThrow(expect.objectContaining({ code: 'layout/unbound-symbol' }));
    expect(() => symbol('not an identifier')).toThrow(expect.objectContaining({ code: 'layout/invalid-parameter' }));
  });
});
