import { UndefinedBehaviorError } from './errors.ts';
import { float32 } from './cType.ts';
import type { ArithmeticType, FloatType, IntType } from './cType.ts';

/**
 * A C++ scalar value in TS: integers of every width as bigint (exact), bool as boolean, float and
 * double as number (a float is always a binary32 value, i.e. `Math.fround(v) === v`).
 */
export type CValue = bigint | number | boolean;

/** Binary operators whose operands undergo the usual arithmetic conversions. */
export type ArithmeticOp = '+' | '-' | '*' | '/' | '%' | '&' | '|' | '^';
/** Shift operators (each operand promoted separately; the result has the promoted left type). */
export type ShiftOp = '<<' | '>>';
/** Relational and equality operators (bool result). */
export type ComparisonOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

const pow2 = (k: number): bigint => 1n << BigInt(k);

/**
 * Round an integer to the nearest binary32 value, ties to even, as a C++ `(float)i` conversion does.
 * Postcondition: exact for |v| ≤ 2^24; otherwise the correctly rounded value (no double rounding via
 * binary64).
 */
export function bigintToFloat32(v: bigint): number {
  const neg = v < 0n;
  const a = neg ? -v : v;
  if (a <= pow2(53)) return Math.fround(Number(v));
  const shift = a.toString(2).length - 24;
  let q = a >> BigInt(shift);
  const rem = a - (q << BigInt(shift));
  const half = pow2(shift - 1);
  if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  const r = Number(q) * 2 ** shift;
  return neg ? -r : r;
}

/** Wrap an exact integer into `t` modulo 2^bits (two's complement for signed types). */
export function wrapInt(t: IntType, v: bigint): bigint {
  return t.signed ? BigInt.asIntN(t.bits, v) : BigInt.asUintN(t.bits, v);
}

/** Does `v` lie in the range of `t`? */
export function fitsInt(t: IntType, v: bigint): boolean {
  return v >= t.min && v <= t.max;
}

function signedResult(t: IntType, v: bigint, what: string): bigint {
  if (t.signed) {
    if (!fitsInt(t, v)) throw new UndefinedBehaviorError('signed-overflow', `${what} = ${v} does not fit ${t.cpp}`);
    return v;
  }
  return wrapInt(t, v);
}

/**
 * Convert a value between arithmetic types as C++ does (implicitly or by `static_cast`): integer to
 * integer wraps modulo 2^bits (defined since C++20; what g++, nvcc and clang do before it);
 * float to integer truncates toward zero and is undefined behaviour when the truncated value does
 * not fit (or is NaN/inf); integer to float rounds to nearest-even; anything to bool is `!= 0`.
 */
export function convertValue(v: CValue, to: ArithmeticType): CValue {
  if (to.kind === 'bool') {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'bigint') return v !== 0n;
    return v !== 0 || Number.isNaN(v);
  }
  if (to.kind === 'int') {
    if (typeof v === 'boolean') return v ? 1n : 0n;
    if (typeof v === 'bigint') return wrapInt(to, v);
    if (!Number.isFinite(v)) throw new UndefinedBehaviorError('float-to-int-out-of-range', `${v} to ${to.cpp}`);
    const t = BigInt(Math.trunc(v));
    if (!fitsInt(to, t)) throw new UndefinedBehaviorError('float-to-int-out-of-range', `${v} to ${to.cpp}`);
    return t;
  }
  const n = typeof v === 'boolean' ? (v ? 1 : 0) : typeof v === 'bigint' ? (to === float32 ? bigintToFloat32(v) : Number(v)) : v;
  return to === float32 ? Math.fround(n) : n;
}

function floatArith(op: ArithmeticOp, t: FloatType, a: number, b: number): number {
  let r: number;
  switch (op) {
    case '+':
      r = a + b;
      break;
    case '-':
      r = a - b;
      break;
    case '*':
      r = a * b;
      break;
    case '/':
      r = a / b;
      break;
    default:
      throw new TypeError(`operator ${op} on ${t.cpp}`);
  }
  // binary64 arithmetic then one rounding to binary32 is the correctly rounded binary32 result for + - * /.
  return t === float32 ? Math.fround(r) : r;
}

/**
 * Apply an arithmetic or bitwise operator to two values already converted to their common type `t`.
 * Integer `/` truncates toward zero and `%` takes the dividend's sign (C++11 onwards), like bigint.
 * Unsigned results wrap; a signed result that does not fit, a zero divisor, or `MIN / -1` throws
 * `UndefinedBehaviorError`.
 */
export function applyArithmetic(op: ArithmeticOp, t: IntType | FloatType, a: CValue, b: CValue): CValue {
  if (t.kind === 'float') return floatArith(op, t, a as number, b as number);
  const x = a as bigint;
  const y = b as bigint;
  switch (op) {
    case '+':
      return signedResult(t, x + y, `${x} + ${y}`);
    case '-':
      return signedResult(t, x - y, `${x} - ${y}`);
    case '*':
      return signedResult(t, x * y, `${x} * ${y}`);
    case '/':
      if (y === 0n) throw new UndefinedBehaviorError('division-by-zero', `${x} / 0 in ${t.cpp}`);
      return signedResult(t, x / y, `${x} / ${y}`);
    case '%':
      if (y === 0n) throw new UndefinedBehaviorError('division-by-zero', `${x} % 0 in ${t.cpp}`);
      // C++ makes a % b undefined whenever a / b is (INT_MIN % -1).
      signedResult(t, x / y, `${x} / ${y} (for %)`);
      return x % y;
    case '&':
      return wrapInt(t, x & y);
    case '|':
      return wrapInt(t, x | y);
    case '^':
      return wrapInt(t, x ^ y);
  }
}

/**
 * Apply `<<` or `>>` to `a` (of the promoted left type `t`) by `count`. A count outside [0, bits) is
 * undefined. C++17 rules for `<<` on signed types: a negative left operand is undefined, and so is a
 * result that does not fit the corresponding unsigned type; otherwise the bits wrap (1 << 31 ==
 * INT_MIN). `>>` of a negative value is arithmetic (implementation-defined in C++17; arithmetic on
 * g++, clang and nvcc, and required by C++20).
 */
export function applyShift(op: ShiftOp, t: IntType, a: bigint, count: bigint): bigint {
  if (count < 0n || count >= BigInt(t.bits)) {
    throw new UndefinedBehaviorError('shift-out-of-range', `${a} ${op} ${count} in ${t.cpp}`);
  }
  if (op === '>>') return a >> count;
  if (t.signed) {
    if (a < 0n) throw new UndefinedBehaviorError('negative-left-shift', `${a} << ${count} in ${t.cpp}`);
    const r = a << count;
    if (r >= pow2(t.bits)) throw new UndefinedBehaviorError('signed-overflow', `${a} << ${count} in ${t.cpp}`);
    return wrapInt(t, r);
  }
  return wrapInt(t, a << count);
}

/** Compare two values of the same (common) type; NaN compares unordered, as IEEE requires. */
export function applyComparison(op: ComparisonOp, a: CValue, b: CValue): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

/** Unary minus on a value of the (promoted) type `t`: signed `-MIN` is undefined, unsigned wraps. */
export function applyNegate(t: IntType | FloatType, a: CValue): CValue {
  if (t.kind === 'float') return -(a as number);
  return signedResult(t, -(a as bigint), `-(${a})`);
}

/** Bitwise complement on a value of the (promoted) integer type `t`. */
export function applyComplement(t: IntType, a: bigint): bigint {
  return wrapInt(t, ~a);
}
