import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bool, int32, int64, sameType, uint32, uint64 } from './cType.ts';
import { evaluate, evaluateDefined } from './evaluate.ts';
import type { Bindings } from './evaluate.ts';
import { children, makeBinary, makeLiteral } from './expr.ts';
import type { Expr } from './expr.ts';
import {
  add,
  and,
  bitAnd,
  bitOr,
  bitXor,
  cast,
  div,
  eq,
  i64,
  lt,
  mod,
  mul,
  neg,
  not,
  or,
  select,
  shl,
  shr,
  sub,
  u32,
  variable,
} from './ops.ts';
import { call } from './ops.ts';
import { printExpr } from './printExpr.ts';
import { rangeOf } from './range.ts';
import { simplify } from './simplify.ts';
import { bindingsArbitrary, intExprArbitrary } from './testing/exprArbitrary.ts';

const x = variable('x', int32);
const y = variable('y', int32);
const r = variable('r', int32, { range: [0, 255] });
const s = variable('s', int32, { range: [-16, 16] });
const u = variable('u', uint32);
const w = variable('w', int64);
const b = variable('b', bool);
const vars = [x, y, r, s, u, w, b];

const p = (e: Expr): string => printExpr(e);

describe('simplify: the documented folds', () => {
  it('folds constants and identities', () => {
    expect(p(add(add(x, 1), 2))).toBe('x + 3');
    expect(p(sub(add(x, 5), 5))).toBe('x');
    expect(p(add(x, -4))).toBe('x - 4');
    expect(p(mul(mul(x, 4), 8))).toBe('x * 32');
    expect(p(mul(x, 1))).toBe('x');
    expect(p(mul(x, 0))).toBe('0');
    expect(p(div(0, x))).toBe('0');
    expect(p(add(0, x))).toBe('x');
    expect(p(sub(0, x))).toBe('-x');
    expect(p(mul(3, x))).toBe('x * 3');
    expect(p(lt(3, x))).toBe('x > 3');
    expect(p(neg(neg(x)))).toBe('x');
    expect(p(not(not(b)))).toBe('b');
    expect(p(not(lt(x, y)))).toBe('x >= y');
  });

  it('reassociates offsets only where no new overflow can appear', () => {
    // x + y may overflow even where (x + 3) + (y - 3) does not: left alone.
    expect(p(add(add(x, 3), add(y, -3)))).toBe('x + 3 + (y - 3)');
    // r + s cannot overflow (r in [0, 255], s in [-16, 16]): constants meet.
    expect(p(add(add(r, 3), add(s, 4)))).toBe('r + s + 7');
    expect(p(add(mul(add(r, 1), 4), 3))).toBe('r * 4 + 7');
    expect(p(sub(5, add(r, 2)))).toBe('-r + 3');
  });

  it('never turns / or % into shifts or masks unless the dividend is known non-negative', () => {
    expect(p(div(x, 8))).toBe('x / 8');
    expect(p(mod(x, 16))).toBe('x % 16');
    expect(p(div(r, 8))).toBe('r >> 3');
    expect(p(mod(r, 16))).toBe('r & 15');
    expect(p(div(u, 8))).toBe('u >> 3');
    expect(p(div(s, 4))).toBe('s / 4');
    // -7 / 2 == -3 in C, but -7 >> 1 == -4: the reason for the rule.
    expect(evaluate(div(x, 2), { x: -7 })).toBe(-3);
    expect(evaluate(shr(x, 1), { x: -7 })).toBe(-4);
  });

  it('cancels and folds by value range', () => {
    expect(p(div(mul(x, 8), 4))).toBe('x * 2');
    expect(p(div(mul(x, 4), 8))).toBe('x / 2');
    expect(p(mod(mul(x, 8), 4))).toBe('0');
    expect(p(div(div(x, 4), 8))).toBe('x / 32');
    expect(p(mod(r, 256))).toBe('r');
    expect(p(div(r, 256))).toBe('0');
    expect(p(lt(r, 256))).toBe('true');
    expect(p(bitAnd(r, 255))).toBe('r');
    expect(p(shr(shl(r, 2), 2))).toBe('(r << 2) >> 2');
    expect(p(shr(shr(x, 2), 3))).toBe('x >> 5');
    expect(p(bitXor(bitXor(x, 5), 3))).toBe('x ^ 6');
    expect(p(bitOr(bitOr(x, 1), 2))).toBe('x | 3');
    expect(p(lt(add(x, 3), 10))).toBe('x < 7');
  });

  it('keeps what C++ leaves undefined and what is impure', () => {
    expect(p(add(makeLiteral(2147483647, int32), 1))).toBe('2147483647 + 1');
    expect(p(div(x, 0))).toBe('x / 0');
    const shuffle = call('__shfl_sync', [u32(0xffffffff), x, 0], int32);
    expect(p(mul(shuffle, 0))).toBe('__shfl_sync(0xffffffffu, x, 0) * 0');
    expect(p(mul(call('f', [], int32, { pure: true }), 0))).toBe('0');
  });

  it('wraps unsigned constants modulo 2^n and prints them non-negative', () => {
    expect(p(sub(u, 1))).toBe('u - 1u');
    expect(p(add(add(u, 5), 4294967295))).toBe('u + 4u');
    expect(p(add(u32(4294967295), 1))).toBe('0u');
  });

  it('folds logic, select and casts', () => {
    expect(p(and(true, b))).toBe('b');
    expect(p(or(b, true))).toBe('true');
    expect(p(and(x, true))).toBe('x != 0');
    expect(p(select(true, x, y))).toBe('x');
    expect(p(select(b, x, x))).toBe('x');
    expect(p(select(b, true, false))).toBe('b');
    expect(p(cast(cast(x, int64), int32))).toBe('x');
    expect(p(cast(cast(r, uint32), int64))).toBe('static_cast<long long>(r)');
    expect(p(cast(cast(x, uint32), int64))).toBe('static_cast<long long>(static_cast<unsigned int>(x))');
    expect(p(eq(x, x))).toBe('true');
    expect(p(add(w, i64(-9223372036854775808n)))).toBe('w + (-9223372036854775807ll - 1)');
  });
});

describe('simplify: properties', () => {
  const trees = intExprArbitrary({ vars });

  it('evaluate(simplify(e), env) === evaluate(e, env) whenever the right side is defined; the type is kept', () => {
    fc.assert(
      fc.property(trees, bindingsArbitrary(vars), (e, env) => {
        const simple = simplify(e);
        expect(sameType(simple.type, e.type)).toBe(true);
        const want = evaluateDefined(e, env);
        if (want === undefined) return; // C++ undefined behaviour: nothing to preserve
        expect(evaluate(simple, env)).toBe(want);
      }),
      { numRuns: 3000 },
    );
  });

  it('rangeOf bounds every defined value of every subexpression', () => {
    const visit = (n: Expr, env: Bindings): void => {
      const v = evaluateDefined(n, env);
      const range = rangeOf(n);
      if (v !== undefined && range !== null) {
        const big = typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v as number | bigint);
        expect(big >= range.min && big <= range.max, `${printExpr(n)} = ${big} outside [${range.min}, ${range.max}]`).toBe(true);
      }
      children(n).forEach((c) => visit(c, env));
    };
    fc.assert(
      fc.property(trees, bindingsArbitrary(vars), (e, env) => {
        visit(e, env);
      }),
      { numRuns: 1000 },
    );
  });

  it('unsigned trees: wraparound is preserved', () => {
    const unsignedTrees = intExprArbitrary({ vars, literalTypes: [uint32, uint64], castTypes: [uint32, uint64, int32] });
    fc.assert(
      fc.property(unsignedTrees, bindingsArbitrary(vars), (e, env) => {
        const want = evaluateDefined(e, env);
        if (want === undefined) return;
        expect(evaluate(simplify(e), env)).toBe(want);
      }),
      { numRuns: 1000 },
    );
  });

  it('division chains and cancellations match C on negatives', () => {
    const k = (v: number): Expr => makeLiteral(v, int32);
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), (v, c1, c2) => {
        const env = { x: v };
        const folded = [div(div(x, c1), c2), div(mul(x, c1 * c2), c2), mod(mod(x, c1 * c2), c2), div(x, c1)];
        const raw = [
          makeBinary('/', makeBinary('/', x, k(c1)), k(c2)),
          makeBinary('/', makeBinary('*', x, k(c1 * c2)), k(c2)),
          makeBinary('%', makeBinary('%', x, k(c1 * c2)), k(c2)),
          makeBinary('/', x, k(c1)),
        ];
        folded.forEach((f, i) => expect(evaluate(f, env)).toBe(evaluate(raw[i] as Expr, env)));
      }),
    );
  });
});
