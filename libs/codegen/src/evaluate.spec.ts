import { describe, expect, it } from 'vitest';
import { UndefinedBehaviorError } from './errors.ts';
import type { EvaluationError } from './errors.ts';
import { bool, float32, float64, int8, int32, int64, opaque, pointer, uint32, uint64 } from './cType.ts';
import { evaluate } from './evaluate.ts';
import { makeBinary, makeCall, makeCast, makeIndex, makeLiteral, makeMember, makeSelect, makeUnary, makeVar } from './expr.ts';

const x = makeVar('x', int32);
const u = makeVar('u', uint32);

describe('evaluate', () => {
  it('returns number for ≤32-bit integers and floats, bigint for 64-bit, boolean for bool', () => {
    expect(evaluate(makeLiteral(5, int32))).toBe(5);
    expect(evaluate(makeLiteral(5, uint64))).toBe(5n);
    expect(evaluate(makeLiteral(true, bool))).toBe(true);
    expect(evaluate(makeLiteral(0.1, float32))).toBe(Math.fround(0.1));
  });

  it('applies the usual arithmetic conversions', () => {
    // -1 + 0u is unsigned; -1 < 0u is false in C++.
    expect(evaluate(makeBinary('+', x, makeLiteral(0, uint32)), { x: -1 })).toBe(4294967295);
    expect(evaluate(makeBinary('<', x, makeLiteral(0, uint32)), { x: -1 })).toBe(false);
    // int64 holds every uint32: -1ll < 0u is true.
    expect(evaluate(makeBinary('<', makeLiteral(-1, int64), u), { u: 0 })).toBe(true);
    // signed char promotes to int before arithmetic: no wrap at 127.
    expect(evaluate(makeBinary('+', makeVar('c', int8), makeLiteral(1, int32)), { c: 127 })).toBe(128);
    expect(evaluate(makeBinary('*', makeLiteral(3, int32), makeLiteral(0.5, float32)))).toBe(1.5);
    expect(evaluate(makeBinary('/', makeLiteral(1, int32), makeLiteral(3, float64)))).toBe(1 / 3);
    expect(evaluate(makeBinary('+', makeLiteral(true, bool), makeLiteral(true, bool)))).toBe(2);
  });

  it('short-circuits && || ?: like C++ (no undefined behaviour in the branch not taken)', () => {
    const divZero = makeBinary('/', x, makeLiteral(0, int32));
    expect(evaluate(makeBinary('&&', makeLiteral(false, bool), divZero), { x: 1 })).toBe(false);
    expect(evaluate(makeBinary('||', makeLiteral(1, int32), divZero), { x: 1 })).toBe(true);
    expect(evaluate(makeSelect(makeLiteral(true, bool), x, divZero), { x: 4 })).toBe(4);
    expect(() => evaluate(makeBinary('&&', makeLiteral(true, bool), divZero), { x: 1 })).toThrow(UndefinedBehaviorError);
  });

  it('converts select branches to the common type', () => {
    const s = makeSelect(makeVar('b', bool), x, makeLiteral(1, uint32));
    expect(evaluate(s, { b: true, x: -1 })).toBe(4294967295);
  });

  it('casts with C++ semantics', () => {
    expect(evaluate(makeCast(x, int8), { x: 300 })).toBe(44);
    expect(evaluate(makeCast(makeLiteral(-2.75, float64), int32))).toBe(-2);
    expect(() => evaluate(makeCast(makeLiteral(1e10, float64), int32))).toThrow(UndefinedBehaviorError);
    expect(evaluate(makeUnary('-', makeVar('uu', uint32)), { uu: 1 })).toBe(4294967295);
    expect(evaluate(makeUnary('~', makeLiteral(0, uint64)))).toBe(2n ** 64n - 1n);
    expect(evaluate(makeUnary('!', makeLiteral(0.0, float32)))).toBe(true);
  });

  it('looks up members and verbatim text by their C++ spelling, arrays by name, calls by callee', () => {
    const tid = makeMember(makeVar('threadIdx', opaque('uint3')), 'x', uint32, { min: 0n, max: 1023n });
    expect(evaluate(makeBinary('*', tid, makeLiteral(2, uint32)), { 'threadIdx.x': 7 })).toBe(14);
    expect(() => evaluate(tid, { 'threadIdx.x': 1024 })).toThrow(/declared range/);
    const arr = makeIndex(makeVar('t', pointer(int32)), x);
    expect(evaluate(arr, { t: [10, 20, 30], x: 2 })).toBe(30);
    expect(() => evaluate(arr, { t: [10], x: 1 })).toThrow(UndefinedBehaviorError);
    const call = makeCall('f', [x, makeLiteral(5, int64)], int64);
    expect(evaluate(call, { f: (a, b) => BigInt(a as number) * (b as bigint), x: 3 })).toBe(15n);
  });

  it('names what cannot be evaluated', () => {
    const catchCode = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return (e as EvaluationError).code;
      }
      return 'none';
    };
    expect(catchCode(() => evaluate(x))).toBe('codegen/unbound');
    expect(catchCode(() => evaluate(x, { x: 2 ** 31 }))).toBe('codegen/binding-out-of-range');
    expect(catchCode(() => evaluate(x, { x: 1.5 }))).toBe('codegen/binding-out-of-range');
    expect(catchCode(() => evaluate(makeVar('r', int32, { min: 0n, max: 3n }), { r: 4 }))).toBe('codegen/binding-out-of-range');
    const p = makeVar('p', pointer(int32));
    expect(catchCode(() => evaluate(makeUnary('*', p), { p: 0 }))).toBe('codegen/not-evaluable');
    expect(catchCode(() => evaluate(makeBinary('+', p, x)))).toBe('codegen/not-evaluable');
  });
});
