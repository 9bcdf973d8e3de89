import { isIntegral, promote, typeRange } from './cType.ts';
import type { ArithmeticType, BoolType, IntType } from './cType.ts';
import type { Expr, IntRange } from './expr.ts';

const cache = new WeakMap<Expr, IntRange | null>();

const min2 = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max2 = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const bitLength = (v: bigint): number => (v <= 0n ? 0 : v.toString(2).length);

function full(t: IntType | BoolType): IntRange {
  return typeRange(t);
}

/**
 * Fit an exact interval into `t`. A signed result outside the type would be an overflow, which C++
 * makes undefined, so (like the compilers) we assume it does not happen and clip; an unsigned result
 * that may wrap covers the whole type.
 */
function fit(t: IntType | BoolType, lo: bigint, hi: bigint): IntRange {
  const f = full(t);
  if (lo >= f.min && hi <= f.max) return { min: lo, max: hi };
  if (t.kind === 'int' && t.signed) {
    const a = max2(lo, f.min);
    const b = min2(hi, f.max);
    return a <= b ? { min: a, max: b } : f;
  }
  return f;
}

/** The range of an integer-valued expression after conversion to `t` (wrapping if it may not fit). */
export function rangeAs(e: Expr, t: IntType | BoolType): IntRange {
  const r = rangeOf(e);
  if (r === null) return full(t);
  const f = full(t);
  return r.min >= f.min && r.max <= f.max ? r : f;
}

function compute(e: Expr): IntRange | null {
  const t = e.type;
  if (!isIntegral(t)) return null;
  switch (e.kind) {
    case 'literal': {
      const v = typeof e.value === 'boolean' ? (e.value ? 1n : 0n) : (e.value as bigint);
      return { min: v, max: v };
    }
    case 'var':
    case 'call':
    case 'member':
    case 'verbatim':
      return e.range ?? full(t);
    case 'index':
      return full(t);
    case 'cast':
      return isIntegral(e.operand.type) ? rangeAs(e.operand, t) : full(t);
    case 'select': {
      const a = rangeAs(e.ifTrue, t);
      const b = rangeAs(e.ifFalse, t);
      return { min: min2(a.min, b.min), max: max2(a.max, b.max) };
    }
    case 'unary': {
      if (e.op === '!') return { min: 0n, max: 1n };
      if (t.kind !== 'int' || !isIntegral(e.operand.type)) return full(t);
      const a = rangeAs(e.operand, t);
      if (e.op === '-') return fit(t, -a.max, -a.min);
      if (e.op === '~') return t.signed ? { min: ~a.max, max: ~a.min } : { min: t.max - a.max, max: t.max - a.min };
      return full(t);
    }
    case 'binary':
      return binaryRange(e.op, e.lhs, e.rhs, t);
  }
}

function binaryRange(op: string, lhs: Expr, rhs: Expr, t: IntType | BoolType): IntRange {
  if (t.kind === 'bool') return { min: 0n, max: 1n };
  if (!isIntegral(lhs.type) || !isIntegral(rhs.type)) return full(t);
  if (op === '<<' || op === '>>') {
    const a = rangeAs(lhs, t);
    const c = rangeAs(rhs, promote(rhs.type as ArithmeticType) as IntType);
    if (c.min < 0n || c.max >= BigInt(t.bits)) return full(t);
    if (op === '>>') {
      if (c.min === c.max) return { min: a.min >> c.min, max: a.max >> c.min };
      return { min: a.min < 0n ? a.min : 0n, max: a.max >= 0n ? a.max : -1n };
    }
    // A negative left operand of << is undefined (C++17): assume it does not occur.
    const lo = max2(a.min, 0n);
    const hi = a.max << c.max;
    return lo <= a.max && hi <= t.max ? { min: lo << c.min, max: hi } : full(t);
  }
  const a = rangeAs(lhs, t);
  const b = rangeAs(rhs, t);
  switch (op) {
    case '+':
      return fit(t, a.min + b.min, a.max + b.max);
    case '-':
      return fit(t, a.min - b.max, a.max - b.min);
    case '*': {
      const p = [a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max];
      return fit(t, p.reduce(min2), p.reduce(max2));
    }
    case '/': {
      if (b.min === b.max && b.min !== 0n) {
        const c = b.min;
        return c > 0n ? fit(t, a.min / c, a.max / c) : fit(t, a.max / c, a.min / c);
      }
      if (b.min > 0n) return fit(t, min2(a.min, 0n), max2(a.max, 0n));
      return full(t);
    }
    case '%': {
      let m: bigint;
      if (b.min > 0n) m = b.max - 1n;
      else if (b.max < 0n) m = -b.min - 1n;
      else return full(t);
      if (a.min >= 0n) return { min: 0n, max: min2(a.max, m) };
      if (a.max <= 0n) return { min: max2(a.min, -m), max: 0n };
      return { min: max2(a.min, -m), max: min2(a.max, m) };
    }
    case '&':
      if (a.min >= 0n && b.min >= 0n) return { min: 0n, max: min2(a.max, b.max) };
      if (a.min >= 0n) return { min: 0n, max: a.max };
      if (b.min >= 0n) return { min: 0n, max: b.max };
      return full(t);
    case '|':
    case '^':
      if (a.min >= 0n && b.min >= 0n) {
        const top = (1n << BigInt(bitLength(max2(a.max, b.max)))) - 1n;
        return { min: op === '|' ? max2(a.min, b.min) : 0n, max: top };
      }
      return full(t);
    default:
      return full(t);
  }
}

/**
 * A sound interval for the value of an integer- or bool-typed expression (`null` for other types),
 * from literals, declared ranges of variables/calls/members, and interval arithmetic. Sound for every
 * evaluation without undefined behaviour: signed results are clipped to the type (overflow cannot
 * happen in a defined evaluation); unsigned results that may wrap widen to the whole type.
 * Postcondition (property-tested): `min <= evaluate(e) <= max` whenever `evaluate(e)` is defined.
 */
export function rangeOf(e: Expr): IntRange | null {
  const hit = cache.get(e);
  if (hit !== undefined) return hit;
  const r = compute(e);
  const frozen = r === null ? null : Object.freeze({ min: r.min, max: r.max });
  cache.set(e, frozen);
  return frozen;
}

/** Is `e` known to be ≥ 0 (always true for unsigned types and bool)? */
export function isKnownNonNegative(e: Expr): boolean {
  const r = rangeOf(e);
  return r !== null && r.min >= 0n;
}
