import { describe, expect, it } from 'vitest';
import { bool, float32, int8, int16, int32, int64, opaque, pointer, uint32, uint64 } from './cType.ts';
import { makeBinary, makeCall, makeCast, makeIndex, makeLiteral, makeMember, makeSelect, makeUnary, makeVar } from './expr.ts';
import type { BinaryOp, Expr } from './expr.ts';
import { printExpr } from './printExpr.ts';

const a = makeVar('a', int32);
const b = makeVar('b', int32);
const c = makeVar('c', int32);
const bin = (op: BinaryOp, l: Expr, r: Expr): Expr => makeBinary(op, l, r);
const p = printExpr;

describe('printExpr', () => {
  it('parenthesizes by precedence and left associativity only', () => {
    expect(p(bin('-', bin('-', a, b), c))).toBe('a - b - c');
    expect(p(bin('-', a, bin('-', b, c)))).toBe('a - (b - c)');
    expect(p(bin('+', a, bin('+', b, c)))).toBe('a + (b + c)');
    expect(p(bin('*', bin('+', a, b), c))).toBe('(a + b) * c');
    expect(p(bin('+', a, bin('*', b, c)))).toBe('a + b * c');
    expect(p(bin('/', a, bin('*', b, c)))).toBe('a / (b * c)');
    expect(p(bin('<', bin('+', a, b), c))).toBe('a + b < c');
    expect(p(bin('&&', bin('<', a, b), bin('!=', b, c)))).toBe('a < b && b != c');
  });

  it('adds clarity parentheses where C++ precedence surprises (and g++ -Wparentheses warns)', () => {
    expect(p(bin('<<', bin('+', a, b), c))).toBe('(a + b) << c');
    expect(p(bin('<<', a, bin('*', b, c)))).toBe('a << (b * c)');
    expect(p(bin('&', a, bin('+', b, c)))).toBe('a & (b + c)');
    expect(p(bin('==', bin('&', a, b), c))).toBe('(a & b) == c');
    expect(p(bin('&', a, bin('==', b, c)))).toBe('a & (b == c)');
    expect(p(bin('|', bin('&', a, b), c))).toBe('(a & b) | c');
    expect(p(bin('&', bin('&', a, b), c))).toBe('a & b & c');
    expect(p(bin('||', bin('&&', a, b), c))).toBe('(a && b) || c');
    expect(p(bin('==', bin('<', a, b), bin('<', b, c)))).toBe('(a < b) == (b < c)');
  });

  it('prints unary operators without ambiguity', () => {
    expect(p(makeUnary('-', makeUnary('-', a)))).toBe('-(-a)');
    expect(p(makeUnary('-', makeLiteral(-5, int32)))).toBe('-(-5)');
    expect(p(makeUnary('-', bin('+', a, b)))).toBe('-(a + b)');
    expect(p(bin('-', a, makeLiteral(-5, int32)))).toBe('a - -5');
    expect(p(bin('*', makeLiteral(-5, int32), a))).toBe('-5 * a');
    expect(p(makeUnary('!', bin('<', a, b)))).toBe('!(a < b)');
    expect(p(makeUnary('~', a))).toBe('~a');
    const ptr = makeVar('p', pointer(int32));
    expect(p(makeUnary('&', makeUnary('*', ptr)))).toBe('&*p');
    expect(p(makeIndex(bin('+', ptr, a), b))).toBe('(p + a)[b]');
    expect(p(makeUnary('*', bin('+', ptr, makeLiteral(1, int32))))).toBe('*(p + 1)');
  });

  it('suffixes integer literals by type', () => {
    expect(p(makeLiteral(5, int32))).toBe('5');
    expect(p(makeLiteral(5, uint32))).toBe('5u');
    expect(p(makeLiteral(5, int64))).toBe('5ll');
    expect(p(makeLiteral(5, uint64))).toBe('5ull');
    expect(p(makeLiteral(-5, int8))).toBe('static_cast<signed char>(-5)');
    expect(p(makeLiteral(7, int16))).toBe('static_cast<short>(7)');
    expect(p(makeLiteral(-2147483648, int32))).toBe('(-2147483647 - 1)');
    expect(p(makeLiteral(-(2n ** 63n), int64))).toBe('(-9223372036854775807ll - 1)');
    expect(p(makeLiteral(2n ** 64n - 1n, uint64))).toBe('0xffffffffffffffffull');
    expect(p(makeLiteral(65535, uint32))).toBe('65535u');
    expect(p(makeLiteral(true, bool))).toBe('true');
    expect(p(makeLiteral(0.5, float32))).toBe('0.5f');
  });

  it('prints ternaries, casts, calls, members and indexing', () => {
    const cond = bin('<', a, b);
    expect(p(makeSelect(cond, a, b))).toBe('a < b ? a : b');
    expect(p(makeSelect(makeSelect(cond, a, b), a, makeSelect(cond, b, c)))).toBe('(a < b ? a : b) ? a : (a < b ? b : c)');
    expect(p(bin('+', makeSelect(cond, a, b), c))).toBe('(a < b ? a : b) + c');
    expect(p(makeCast(bin('+', a, b), int64))).toBe('static_cast<long long>(a + b)');
    const fp = makeVar('fp', pointer(float32, { const: true }));
    expect(p(makeCast(fp, pointer(int32, { const: true })))).toBe('reinterpret_cast<const int*>(fp)');
    expect(p(makeCall('std::max', [a, b], int32, { templateArgs: ['int'] }))).toBe('std::max<int>(a, b)');
    const t = makeVar('threadIdx', opaque('uint3'));
    expect(p(makeMember(t, 'x', uint32))).toBe('threadIdx.x');
    const sp = makeVar('s', pointer(opaque('Args')));
    expect(p(makeMember(sp, 'n', int32))).toBe('s->n');
    expect(p(makeMember(makeUnary('*', sp), 'n', int32))).toBe('(*s).n');
    expect(p(makeIndex(makeVar('q', pointer(int32)), bin('+', a, b)))).toBe('q[a + b]');
  });
});
