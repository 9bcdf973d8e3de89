import { floorDivInt, gcd, nextPowerOfTwo } from '../integerMath.ts';
import type { Atom, SymInt, SymExpr } from './expr.ts';

/** A closed integer range [lo, hi] (bounds may be approximate only beyond 2^53). */
export interface Interval {
  readonly lo: number;
  readonly hi: number;
}

/**
 * `honest`: the range of values `x` can really take, given each symbol's domain and each index
 * variable's `[min, max]`. `assumed`: additionally assumes every index variable with an `extent` lies
 * in `[0, extent)` (true for valid coordinates); used only to justify simplifications.
 */
export type BoundsMode = 'honest' | 'assumed';

const caches: Record<BoundsMode, WeakMap<object, Interval>> = { honest: new WeakMap(), assumed: new WeakMap() };

/** The interval of `x` (see BoundsMode). Postcondition: lo ≤ evaluate(x) ≤ hi for every admissible binding. */
export function intervalOf(x: SymInt, mode: BoundsMode = 'honest'): Interval {
  if (typeof x === 'number') return { lo: x, hi: x };
  const cache = caches[mode];
  const hit = cache.get(x);
  if (hit !== undefined) return hit;
  let lo = x.constant;
  let hi = x.constant;
  for (const t of x.terms) {
    let acc: Interval = { lo: t.coef, hi: t.coef };
    for (const a of t.atoms) acc = mulI(acc, atomInterval(a, mode));
    lo += acc.lo;
    hi += acc.hi;
  }
  const out = { lo, hi };
  cache.set(x, out);
  return out;
}

/** Interval of one atom. */
export function atomInterval(a: Atom, mode: BoundsMode): Interval {
  const cache = caches[mode];
  const hit = cache.get(a);
  if (hit !== undefined) return hit;
  const out = computeAtomInterval(a, mode);
  cache.set(a, out);
  return out;
}

function computeAtomInterval(a: Atom, mode: BoundsMode): Interval {
  switch (a.kind) {
    case 'symbol':
      return { lo: a.min, hi: a.max };
    case 'var': {
      if (mode === 'assumed' && a.extent !== undefined) {
        const e = intervalOf(a.extent, mode);
        const lo = Math.max(0, a.min);
        const hi = Math.min(a.max, e.hi - 1);
        if (lo <= hi) return { lo, hi };
      }
      return { lo: a.min, hi: a.max };
    }
    case 'floorDiv': {
      const n = intervalOf(a.num, mode);
      const d = intervalOf(a.den, mode);
      const c = [fd(n.lo, d.lo), fd(n.lo, d.hi), fd(n.hi, d.lo), fd(n.hi, d.hi)];
      return { lo: Math.min(...c), hi: Math.max(...c) };
    }
    case 'mod': {
      const n = intervalOf(a.num, mode);
      const d = intervalOf(a.den, mode);
      if (n.lo >= 0 && n.hi < d.lo) return n;
      return { lo: 0, hi: n.lo >= 0 ? Math.min(n.hi, d.hi - 1) : d.hi - 1 };
    }
    case 'xor': {
      const v = intervalOf(a.a, mode);
      const k = intervalOf(a.b, mode);
      if (k.hi <= 0) return v;
      const p = nextPowerOfTwo(k.hi + 1);
      // xor with a key in [0, p) permutes the low log2(p) bits and keeps ⌊v / p⌋.
      return { lo: fd(v.lo, p) * p, hi: fd(v.hi, p) * p + p - 1 };
    }
  }
}

function fd(a: number, b: number): number {
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? floorDivInt(a, b) : Math.floor(a / b);
}

function mulI(x: Interval, y: Interval): Interval {
  const c = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi].map((v) => (Number.isNaN(v) ? 0 : v));
  return { lo: Math.min(...c), hi: Math.max(...c) };
}

/**
 * A positive integer that provably divides `x` for every admissible binding (0 when x ≡ 0):
 * gcd over terms of |coef|·Π(symbol multipleOf) and the constant.
 */
export function divisorOf(x: SymInt): number {
  if (typeof x === 'number') return Math.abs(x);
  let g = Math.abs(x.constant);
  for (const t of x.terms) {
    let m = Math.abs(t.coef);
    for (const a of t.atoms) if (a.kind === 'symbol') m *= a.multipleOf;
    g = gcd(g, Number.isSafeInteger(m) ? m : Math.abs(t.coef));
  }
  return g;
}

/** gcd of the integer coefficients and constant of `x` (symbols' multipleOf ignored). */
export function coefficientGcd(x: SymExpr): number {
  let g = Math.abs(x.constant);
  for (const t of x.terms) g = gcd(g, t.coef);
  return g;
}
