import { SymbolicArithmeticError } from '../errors.ts';

/**
 * A length, stride, offset or index that is either known now (`number`, an integer) or a symbolic
 * integer expression over named kernel arguments (`SymExpr`). Every constructor in this module
 * returns the canonical form: a plain `number` whenever the value folds to a constant.
 */
export type SymInt = number | SymExpr;

/** The declared domain of a kernel-argument symbol: `min ≤ value ≤ max` and `value ≡ 0 (mod multipleOf)`. */
export interface SymbolDomain {
  readonly min: number;
  readonly max: number;
  readonly multipleOf: number;
}

/** A named kernel argument (`seqlenQ`, `strideQ`): a runtime integer in its declared domain. */
export interface SymbolAtom extends SymbolDomain {
  readonly kind: 'symbol';
  readonly name: string;
  readonly key: string;
}

/**
 * An index variable (used by emission): an integer whose honest range is `[min, max]`; when `extent`
 * is given, simplifications may also assume `0 ≤ value < extent` (true for every valid coordinate).
 */
export interface VarAtom {
  readonly kind: 'var';
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly extent: SymInt | undefined;
  readonly key: string;
}

/** ⌊num / den⌋ with den ≥ 1 (floor division, exact for negative numerators too). */
export interface FloorDivAtom {
  readonly kind: 'floorDiv';
  readonly num: SymInt;
  readonly den: SymInt;
  readonly key: string;
}

/** num − den·⌊num / den⌋ with den ≥ 1: always in [0, den). */
export interface ModAtom {
  readonly kind: 'mod';
  readonly num: SymInt;
  readonly den: SymInt;
  readonly key: string;
}

/** Two's-complement bitwise xor of `a` and `b`, where `b` is non-negative (the swizzle key). */
export interface XorAtom {
  readonly kind: 'xor';
  readonly a: SymInt;
  readonly b: SymInt;
  readonly key: string;
}

/** An indivisible factor of a monomial. */
export type Atom = SymbolAtom | VarAtom | FloorDivAtom | ModAtom | XorAtom;

/** `coef · Π atoms` (atoms sorted by key, repeated for powers); `coef ≠ 0`. */
export interface Term {
  readonly coef: number;
  readonly atoms: readonly Atom[];
  readonly monoKey: string;
}

/**
 * The non-constant canonical form: `constant + Σ terms`, a sum of monomials with integer
 * coefficients, sorted by monomial key, at least one term. Two SymExprs are equal as functions of
 * their atoms iff their `key`s are equal.
 */
export class SymExpr {
  readonly constant: number;
  readonly terms: readonly Term[];
  readonly key: string;

  /** @internal use the arithmetic helpers; they keep the form canonical. */
  constructor(constant: number, terms: readonly Term[]) {
    this.constant = constant;
    this.terms = terms;
    this.key = terms.map((t) => `${t.coef}*${t.monoKey}`).join('+') + `+${constant}`;
  }

  /** Readable form, e.g. `2*seqlenQ + floorDiv(x, 8) - 1`. */
  toString(): string {
    return formatSymInt(this);
  }
}

/** Whether `x` is a compile-time integer. */
export function isStatic(x: SymInt): x is number {
  return typeof x === 'number';
}

/** Canonical key of a SymInt (equal keys ⇔ identical canonical forms). */
export function keyOf(x: SymInt): string {
  return typeof x === 'number' ? String(x) : x.key;
}

/** Structural equality of canonical forms (sound: equal ⇒ equal values; not complete). */
export function symEquals(a: SymInt, b: SymInt): boolean {
  return keyOf(a) === keyOf(b);
}

/** Throws unless `x` is a safe integer: keeps every evaluation exact. */
export function checkSafe(x: number, what: string): number {
  if (!Number.isSafeInteger(x)) {
    throw new SymbolicArithmeticError('layout/integer-overflow', `${what}: result must be a safe integer, |x| ≤ 2^53 − 1 (got ${x})`);
  }
  return x === 0 ? 0 : x; // no −0
}

/** Builds the canonical SymInt of `constant + Σ coef·monomial` from a map keyed by monomial key. */
export function fromTerms(constant: number, terms: Map<string, { coef: number; atoms: readonly Atom[] }>): SymInt {
  const kept: Term[] = [];
  for (const [monoKey, t] of terms) if (t.coef !== 0) kept.push({ coef: t.coef, atoms: t.atoms, monoKey });
  if (kept.length === 0) return constant;
  kept.sort((x, y) => (x.monoKey < y.monoKey ? -1 : x.monoKey > y.monoKey ? 1 : 0));
  return new SymExpr(constant, kept);
}

/** The canonical SymInt of a single atom. */
export function fromAtom(atom: Atom): SymExpr {
  return new SymExpr(0, [{ coef: 1, atoms: [atom], monoKey: atom.key }]);
}

/** If `x` is exactly one atom (coefficient 1, no constant), that atom. */
export function asAtom(x: SymInt): Atom | undefined {
  if (typeof x === 'number' || x.constant !== 0 || x.terms.length !== 1) return undefined;
  const t = x.terms[0]!;
  return t.coef === 1 && t.atoms.length === 1 ? t.atoms[0] : undefined;
}

/** Every atom reachable from `x` (including those inside div/mod/xor operands). */
export function forEachAtom(x: SymInt, visit: (a: Atom) => void): void {
  if (typeof x === 'number') return;
  for (const t of x.terms) {
    for (const a of t.atoms) {
      visit(a);
      switch (a.kind) {
        case 'floorDiv':
        case 'mod':
          forEachAtom(a.num, visit);
          forEachAtom(a.den, visit);
          break;
        case 'xor':
          forEachAtom(a.a, visit);
          forEachAtom(a.b, visit);
          break;
        default:
          break;
      }
    }
  }
}

/** Whether `x` mentions any index variable (`var` atom). */
export function hasVars(x: SymInt): boolean {
  let found = false;
  forEachAtom(x, (a) => {
    if (a.kind === 'var') found = true;
  });
  return found;
}

/** Readable form of a SymInt: integers print as themselves. */
export function formatSymInt(x: SymInt): string {
  if (typeof x === 'number') return String(x);
  let out = '';
  for (const t of x.terms) {
    const body = t.atoms.map(formatAtom).join('*');
    const mag = Math.abs(t.coef);
    const text = mag === 1 ? body : `${mag}*${body}`;
    if (out === '') out = t.coef < 0 ? `-${text}` : text;
    else out += t.coef < 0 ? ` - ${text}` : ` + ${text}`;
  }
  if (x.constant > 0) out += ` + ${x.constant}`;
  else if (x.constant < 0) out += ` - ${-x.constant}`;
  return out;
}

function formatOperand(x: SymInt): string {
  return formatSymInt(x);
}

function formatAtom(a: Atom): string {
  switch (a.kind) {
    case 'symbol':
    case 'var':
      return a.name;
    case 'floorDiv':
      return `floorDiv(${formatOperand(a.num)}, ${formatOperand(a.den)})`;
    case 'mod':
      return `mod(${formatOperand(a.num)}, ${formatOperand(a.den)})`;
    case 'xor':
      return `xor(${formatOperand(a.a)}, ${formatOperand(a.b)})`;
  }
}
