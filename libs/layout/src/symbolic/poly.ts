import { checkSafe, fromTerms, type Atom, type SymInt } from './expr.ts';

type TermMap = Map<string, { coef: number; atoms: readonly Atom[] }>;

function accumulate(into: TermMap, monoKey: string, coef: number, atoms: readonly Atom[]): void {
  const prev = into.get(monoKey);
  if (prev === undefined) into.set(monoKey, { coef, atoms });
  else into.set(monoKey, { coef: checkSafe(prev.coef + coef, 'add'), atoms });
}

/** `Σ xs`, canonical. Postcondition: evaluate(add(a, b)) = evaluate(a) + evaluate(b). */
export function add(...xs: readonly SymInt[]): SymInt {
  let constant = 0;
  let allStatic = true;
  for (const x of xs) {
    if (typeof x === 'number') constant = checkSafe(constant + x, 'add');
    else allStatic = false;
  }
  if (allStatic) return constant;
  const terms: TermMap = new Map();
  for (const x of xs) {
    if (typeof x === 'number') continue;
    constant = checkSafe(constant + x.constant, 'add');
    for (const t of x.terms) accumulate(terms, t.monoKey, t.coef, t.atoms);
  }
  return fromTerms(constant, terms);
}

/** `a − b`, canonical. */
export function sub(a: SymInt, b: SymInt): SymInt {
  return add(a, neg(b));
}

/** `−a`, canonical. */
export function neg(a: SymInt): SymInt {
  return scale(a, -1);
}

/** `k · a` for an integer k, canonical. */
export function scale(a: SymInt, k: number): SymInt {
  if (typeof a === 'number') return checkSafe(a * k, 'mul');
  if (k === 0) return 0;
  if (k === 1) return a;
  const terms: TermMap = new Map();
  for (const t of a.terms) terms.set(t.monoKey, { coef: checkSafe(t.coef * k, 'mul'), atoms: t.atoms });
  return fromTerms(checkSafe(a.constant * k, 'mul'), terms);
}

function mergeAtoms(x: readonly Atom[], y: readonly Atom[]): Atom[] {
  const out = [...x, ...y];
  out.sort((p, q) => (p.key < q.key ? -1 : p.key > q.key ? 1 : 0));
  return out;
}

/** `Π xs`, distributed into a sum of monomials. Postcondition: evaluate(mul(a, b)) = evaluate(a)·evaluate(b). */
export function mul(...xs: readonly SymInt[]): SymInt {
  let acc: SymInt = 1;
  for (const x of xs) acc = mul2(acc, x);
  return acc;
}

function mul2(a: SymInt, b: SymInt): SymInt {
  if (typeof a === 'number') return scale(b, a);
  if (typeof b === 'number') return scale(a, b);
  const terms: TermMap = new Map();
  // (ca + Σ ta)(cb + Σ tb) = ca·cb + ca·Σ tb + cb·Σ ta + Σ ta·tb
  for (const t of b.terms) if (a.constant !== 0) accumulate(terms, t.monoKey, checkSafe(t.coef * a.constant, 'mul'), t.atoms);
  for (const t of a.terms) if (b.constant !== 0) accumulate(terms, t.monoKey, checkSafe(t.coef * b.constant, 'mul'), t.atoms);
  for (const ta of a.terms) {
    for (const tb of b.terms) {
      const atoms = mergeAtoms(ta.atoms, tb.atoms);
      accumulate(terms, atoms.map((x) => x.key).join('·'), checkSafe(ta.coef * tb.coef, 'mul'), atoms);
    }
  }
  return fromTerms(checkSafe(a.constant * b.constant, 'mul'), terms);
}

/** Σ xs (alias of `add` over a list). */
export function sum(xs: readonly SymInt[]): SymInt {
  return add(...xs);
}

/** Π xs (alias of `mul` over a list; 1 for an empty list). */
export function product(xs: readonly SymInt[]): SymInt {
  return mul(...xs);
}

/** Monomial key of an atom list (atoms must be sorted). */
export function monoKeyOf(atoms: readonly Atom[]): string {
  return atoms.map((x) => x.key).join('·');
}
