import { SymbolicArithmeticError } from '../errors.ts';
import { floorDivInt, gcd, modInt, xorInt } from '../integerMath.ts';
import { atomInterval, coefficientGcd, intervalOf, type BoundsMode } from './bounds.ts';
import {
  asAtom,
  checkSafe,
  formatSymInt,
  fromAtom,
  fromTerms,
  keyOf,
  type Atom,
  type FloorDivAtom,
  type SymExpr,
  type SymInt,
  type Term,
} from './expr.ts';
import { add, monoKeyOf, mul, scale, sub } from './poly.ts';

/**
 * Division, modulo and xor with simplification, and the small prover behind it.
 *
 * Simplifications are exact for every binding inside the symbols' declared domains. Those that use
 * an index variable's `extent` (the `assumed` bounds) are exact for every valid coordinate, which is
 * the only place the layout algebra defines offsets.
 */

function requireDivisor(b: SymInt, op: string): void {
  if (intervalOf(b).lo < 1 && !proveNonNegative(sub(b, 1), 'honest')) {
    throw new SymbolicArithmeticError('layout/non-positive-divisor', `${op}: the divisor must be provably ≥ 1 (got ${formatSymInt(b)})`);
  }
}

/** ⌊a / b⌋ (floor division), b provably ≥ 1. Postcondition: evaluate(floorDiv(a, b)) = ⌊evaluate(a) / evaluate(b)⌋. */
export function floorDiv(a: SymInt, b: SymInt): SymInt {
  requireDivisor(b, 'floorDiv');
  if (typeof a === 'number' && typeof b === 'number') return floorDivInt(a, b);
  if (b === 1) return a;
  if (a === 0) return 0;
  if (typeof a === 'number') return floorDivCore(a, b);
  const { q, r } = splitDivisible(a, b, false);
  return add(q, floorDivCore(r, b));
}

/** ⌈a / b⌉ = ⌊(a + b − 1) / b⌋, b provably ≥ 1. */
export function ceilDiv(a: SymInt, b: SymInt): SymInt {
  return floorDiv(add(a, b, -1), b);
}

/** a mod b ∈ [0, b) (floor modulo), b provably ≥ 1. Postcondition: a = b·floorDiv(a, b) + mod(a, b). */
export function mod(a: SymInt, b: SymInt): SymInt {
  requireDivisor(b, 'mod');
  if (typeof a === 'number' && typeof b === 'number') return modInt(a, b);
  if (b === 1 || a === 0) return 0;
  if (typeof a === 'number') return modCore(a, b);
  return modCore(splitDivisible(a, b, true).r, b);
}

/** Round `a` up to a multiple of `b`: b·⌈a / b⌉. */
export function roundUp(a: SymInt, b: SymInt): SymInt {
  return mul(ceilDiv(a, b), b);
}

/** Two's-complement `a XOR b` for a provably non-negative key `b`. */
export function xor(a: SymInt, b: SymInt): SymInt {
  if (intervalOf(b).lo < 0) {
    throw new SymbolicArithmeticError('layout/non-positive-divisor', `xor: the key must be provably ≥ 0 (got ${formatSymInt(b)})`);
  }
  if (typeof a === 'number' && typeof b === 'number') return xorInt(a, b);
  if (b === 0) return a;
  if (a === 0) return b;
  return fromAtom({ kind: 'xor', a, b, key: `xr(${keyOf(a)};${keyOf(b)})` });
}

function floorDivCore(r: SymInt, b: SymInt): SymInt {
  if (typeof r === 'number' && typeof b === 'number') return floorDivInt(r, b);
  if (r === 0) return 0;
  if (proveNonNegative(r) && proveNonNegative(sub(sub(b, r), 1))) return 0;
  if (proveNonNegative(add(r, b)) && proveNonNegative(sub(-1, r))) return -1;
  if (typeof r !== 'number' && typeof b === 'number') {
    const g = gcd(coefficientGcd(r), b);
    if (g > 1) return floorDivCore(exactScaleDown(r, g), b / g);
  }
  const inner = asAtom(r);
  if (inner?.kind === 'floorDiv') return floorDiv(inner.num, mul(inner.den, b));
  return fromAtom(floorDivAtom(r, b));
}

function modCore(r: SymInt, b: SymInt): SymInt {
  if (typeof r === 'number' && typeof b === 'number') return modInt(r, b);
  if (r === 0 || b === 1) return 0;
  if (proveNonNegative(r) && proveNonNegative(sub(sub(b, r), 1))) return r;
  if (typeof r !== 'number' && typeof b === 'number') {
    const g = gcd(coefficientGcd(r), b);
    if (g > 1) return scale(modCore(exactScaleDown(r, g), b / g), g);
  }
  const inner = asAtom(r);
  if (inner?.kind === 'mod' && divides(b, inner.den)) return mod(inner.num, b);
  return fromAtom({ kind: 'mod', num: r, den: b, key: `md(${keyOf(r)};${keyOf(b)})` });
}

/** The raw (unsimplified) ⌊num / den⌋ atom; `floorDiv` builds the same atom when nothing simplifies. */
export function floorDivAtom(num: SymInt, den: SymInt): FloorDivAtom {
  return { kind: 'floorDiv', num, den, key: `fd(${keyOf(num)};${keyOf(den)})` };
}

function exactScaleDown(x: SymExpr, g: number): SymInt {
  const terms = new Map<string, { coef: number; atoms: readonly Atom[] }>();
  for (const t of x.terms) terms.set(t.monoKey, { coef: t.coef / g, atoms: t.atoms });
  return fromTerms(x.constant / g, terms);
}

/** Whether b divides d for every binding (d is a multiple of b term by term). */
function divides(b: SymInt, d: SymInt): boolean {
  if (typeof d === 'number') return typeof b === 'number' && d % b === 0;
  const { r } = splitDivisible(d, b, false);
  return r === 0;
}

/**
 * Splits a = q·b + r exactly, moving into q every term that b divides (b an integer or a monomial).
 * With `reduceCoefficients` (for mod only) an integer b also reduces every coefficient mod b.
 */
function splitDivisible(a: SymExpr, b: SymInt, reduceCoefficients: boolean): { q: SymInt; r: SymInt } {
  const q = new Map<string, { coef: number; atoms: readonly Atom[] }>();
  const r = new Map<string, { coef: number; atoms: readonly Atom[] }>();
  if (typeof b === 'number') {
    for (const t of a.terms) {
      if (t.coef % b === 0) q.set(t.monoKey, { coef: t.coef / b, atoms: t.atoms });
      else if (reduceCoefficients) {
        // Symmetric residue in (−b/2, b/2]: keeps mod(−x, b) readable.
        let rc = modInt(t.coef, b);
        if (2 * rc > b) rc -= b;
        q.set(t.monoKey, { coef: (t.coef - rc) / b, atoms: t.atoms });
        r.set(t.monoKey, { coef: rc, atoms: t.atoms });
      } else r.set(t.monoKey, { coef: t.coef, atoms: t.atoms });
    }
    return { q: fromTerms(floorDivInt(a.constant, b), q), r: fromTerms(modInt(a.constant, b), r) };
  }
  if (b.constant !== 0 || b.terms.length !== 1) return { q: 0, r: a };
  const bt = b.terms[0]!;
  for (const t of a.terms) {
    const rest = t.coef % bt.coef === 0 ? removeAtoms(t, bt.atoms) : undefined;
    if (rest === undefined) r.set(t.monoKey, { coef: t.coef, atoms: t.atoms });
    else {
      const key = monoKeyOf(rest);
      q.set(key, { coef: checkSafe((q.get(key)?.coef ?? 0) + t.coef / bt.coef, 'floorDiv'), atoms: rest });
    }
  }
  if (q.size === 0) return { q: 0, r: a };
  // A term whose monomial equals b's contributes to q's constant part.
  let qConstant = 0;
  const one = q.get('');
  if (one !== undefined) {
    qConstant = one.coef;
    q.delete('');
  }
  return { q: fromTerms(qConstant, q), r: fromTerms(a.constant, r) };
}

function removeAtoms(t: Term, remove: readonly Atom[]): Atom[] | undefined {
  const rest = [...t.atoms];
  for (const a of remove) {
    const i = rest.findIndex((x) => x.key === a.key);
    if (i < 0) return undefined;
    rest.splice(i, 1);
  }
  return rest;
}

/**
 * The assumed exclusive upper bound of an atom whose assumed range is [0, extent), if known:
 * index variables with an extent, mod (its divisor), floorDiv of such an atom, xor of such an atom.
 */
export function extentOf(a: Atom): SymInt | undefined {
  switch (a.kind) {
    case 'symbol':
      return undefined;
    case 'var':
      return a.extent;
    case 'mod':
      return a.den;
    case 'floorDiv': {
      const inner = asAtom(a.num);
      const e = inner === undefined ? undefined : extentOf(inner);
      return e === undefined ? undefined : add(floorDiv(sub(e, 1), a.den), 1);
    }
    case 'xor': {
      const inner = asAtom(a.a);
      const e = inner === undefined ? undefined : extentOf(inner);
      return typeof e === 'number' && (e & (e - 1)) === 0 && intervalOf(a.b).hi < e ? e : undefined;
    }
  }
}

/**
 * Tries to prove x ≥ 0 (under `mode` bounds, default `assumed`): first by intervals, then by
 * lower-bound substitutions that keep correlations interval arithmetic loses:
 * - (assumed only) an atom of known extent is replaced, term by term, by its extreme value (0 or
 *   extent − 1, by the sign of the rest of the term), so symbolic extents cancel (u < L ⇒ L − 1 − u ≥ 0);
 * - a symbol that x is linear in and whose coefficient has a known sign is replaced by its domain
 *   minimum or maximum (monotonicity: (s − 1)·t ≥ 0 for s ≥ 1).
 * Sound; not complete.
 */
export function proveNonNegative(x: SymInt, mode: BoundsMode = 'assumed'): boolean {
  let cur = x;
  for (let round = 0; round < 8; round++) {
    if (intervalOf(cur, mode).lo >= 0) return true;
    if (typeof cur === 'number') return false;
    const next = (mode === 'assumed' ? lowerBoundStep(cur) : undefined) ?? monotoneSymbolStep(cur, mode);
    if (next === undefined) return false;
    cur = next;
  }
  return intervalOf(cur, mode).lo >= 0;
}

/** Replaces one symbol that `x` is linear in, with a coefficient of known sign, by its minimising bound. */
function monotoneSymbolStep(x: SymExpr, mode: BoundsMode): SymInt | undefined {
  const seen = new Set<string>();
  for (const t of x.terms) {
    for (const a of t.atoms) {
      if (a.kind !== 'symbol' || seen.has(a.key)) continue;
      seen.add(a.key);
      const withIt: Term[] = [];
      const without: Term[] = [];
      let linear = true;
      for (const u of x.terms) {
        const count = u.atoms.filter((b) => b.key === a.key).length;
        if (count > 1) linear = false;
        (count === 1 ? withIt : without).push(u);
      }
      if (!linear) continue;
      const coefficient = add(...withIt.map((u) => termWithout(u, a.key)));
      const c = intervalOf(coefficient, mode);
      let value: number;
      if (c.lo >= 0) value = a.min;
      else if (c.hi <= 0) value = a.max;
      else continue;
      return add(x.constant, ...without.map((u) => termWithout(u, '')), mul(coefficient, value));
    }
  }
  return undefined;
}

/** The term as a SymInt, with one occurrence of the atom keyed `key` removed ('' removes nothing). */
function termWithout(t: Term, key: string): SymInt {
  const i = key === '' ? -1 : t.atoms.findIndex((b) => b.key === key);
  const atoms = i < 0 ? t.atoms : t.atoms.filter((_, j) => j !== i);
  if (atoms.length === 0) return t.coef;
  return fromTerms(0, new Map([[monoKeyOf(atoms), { coef: t.coef, atoms }]]));
}

function lowerBoundStep(x: SymExpr): SymInt | undefined {
  const parts: SymInt[] = [x.constant];
  let changed = false;
  for (const t of x.terms) {
    const i = t.atoms.findIndex((a) => extentOf(a) !== undefined);
    if (i < 0) {
      parts.push(fromTerms(0, new Map([[t.monoKey, { coef: t.coef, atoms: t.atoms }]])));
      continue;
    }
    const atom = t.atoms[i]!;
    if (atomInterval(atom, 'assumed').lo < 0) return undefined;
    const restAtoms = t.atoms.filter((_, j) => j !== i);
    let lo = t.coef;
    let hi = t.coef;
    for (const a of restAtoms) {
      const r = atomInterval(a, 'assumed');
      const c = [lo * r.lo, lo * r.hi, hi * r.lo, hi * r.hi];
      lo = Math.min(...c);
      hi = Math.max(...c);
    }
    const rest = restAtoms.length === 0 ? t.coef : fromTerms(0, new Map([[monoKeyOf(restAtoms), { coef: t.coef, atoms: restAtoms }]]));
    changed = true;
    if (lo >= 0) continue; // rest ≥ 0 and atom ≥ 0: the term is ≥ 0
    if (hi <= 0)
      parts.push(mul(rest, sub(extentOf(atom)!, 1))); // rest ≤ 0 and atom ≤ extent − 1
    else return undefined;
  }
  return changed ? add(...parts) : undefined;
}

/** Tries to prove a < b under the `assumed` bounds. */
export function proveLessThan(a: SymInt, b: SymInt): boolean {
  return proveNonNegative(sub(sub(b, a), 1));
}

/** Tries to prove a ≤ b under the `assumed` bounds. */
export function proveLessEqual(a: SymInt, b: SymInt): boolean {
  return proveNonNegative(sub(b, a));
}
