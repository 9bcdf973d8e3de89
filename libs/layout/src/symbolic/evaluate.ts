import { BindingError } from '../errors.ts';
import { floorDivInt, modInt, xorInt } from '../integerMath.ts';
import { forEachAtom, type Atom, type SymInt, type SymbolAtom } from './expr.ts';

/** Values of named symbols (kernel arguments and, for emission tests, index variables). */
export type Bindings = Readonly<Record<string, number>>;

/** The empty binding set, shared so that caches keyed by bindings hit for static layouts. */
export const NO_BINDINGS: Bindings = Object.freeze({});

/**
 * The value of `x` under `bindings`. Every symbol must be bound to a safe integer inside its declared
 * domain (typed `BindingError` otherwise). Postcondition: agrees with the arithmetic it models
 * (floor division/modulo, two's-complement xor).
 */
export function evaluateSymInt(x: SymInt, bindings: Bindings = NO_BINDINGS): number {
  if (typeof x === 'number') return x;
  let acc = x.constant;
  for (const t of x.terms) {
    let v = t.coef;
    for (const a of t.atoms) v *= evaluateAtom(a, bindings);
    acc += v;
  }
  return acc === 0 ? 0 : acc;
}

function evaluateAtom(a: Atom, bindings: Bindings): number {
  switch (a.kind) {
    case 'symbol':
      return bound(a, bindings);
    case 'var': {
      const v = bindings[a.name];
      if (v === undefined) throw new BindingError('layout/unbound-symbol', `bindings: index variable '${a.name}' is not bound`);
      return v;
    }
    case 'floorDiv':
      return floorDivInt(evaluateSymInt(a.num, bindings), evaluateSymInt(a.den, bindings));
    case 'mod':
      return modInt(evaluateSymInt(a.num, bindings), evaluateSymInt(a.den, bindings));
    case 'xor':
      return xorInt(evaluateSymInt(a.a, bindings), evaluateSymInt(a.b, bindings));
  }
}

function bound(a: SymbolAtom, bindings: Bindings): number {
  const v = bindings[a.name];
  if (v === undefined) throw new BindingError('layout/unbound-symbol', `bindings: symbol '${a.name}' is not bound`);
  checkDomain(a, v);
  return v;
}

/** Throws unless `value` lies in the symbol's declared domain. */
export function checkDomain(a: SymbolAtom, value: number): void {
  if (!Number.isSafeInteger(value) || value < a.min || value > a.max || value % a.multipleOf !== 0) {
    const rule = a.multipleOf === 1 ? `an integer in [${a.min}, ${a.max}]` : `a multiple of ${a.multipleOf} in [${a.min}, ${a.max}]`;
    throw new BindingError('layout/binding-out-of-domain', `bindings.${a.name}: must be ${rule} (got ${value})`);
  }
}

/**
 * The kernel-argument symbols `x` mentions, by name. Two different declarations of one name are
 * rejected: they would make simplification unsound.
 */
export function freeSymbols(xs: readonly SymInt[], into: Map<string, SymbolAtom> = new Map()): Map<string, SymbolAtom> {
  for (const x of xs) {
    forEachAtom(x, (a) => {
      if (a.kind !== 'symbol') return;
      const prev = into.get(a.name);
      if (prev === undefined) into.set(a.name, a);
      else if (prev.min !== a.min || prev.max !== a.max || prev.multipleOf !== a.multipleOf) {
        throw new BindingError('layout/binding-out-of-domain', `symbol '${a.name}': declared twice with different domains`);
      }
    });
  }
  return into;
}

/** Checks every symbol in `symbols` is bound inside its domain (for binding once, evaluating many times). */
export function checkBindings(symbols: ReadonlyMap<string, SymbolAtom>, bindings: Bindings): void {
  for (const a of symbols.values()) bound(a, bindings);
}

/** Merges symbol tables (same conflict rule as `freeSymbols`). */
export function mergeSymbols(tables: Iterable<ReadonlyMap<string, SymbolAtom>>): Map<string, SymbolAtom> {
  const into = new Map<string, SymbolAtom>();
  for (const table of tables) {
    for (const a of table.values()) {
      const prev = into.get(a.name);
      if (prev === undefined) into.set(a.name, a);
      else if (prev.min !== a.min || prev.max !== a.max || prev.multipleOf !== a.multipleOf) {
        throw new BindingError('layout/binding-out-of-domain', `symbol '${a.name}': declared twice with different domains`);
      }
    }
  }
  return into;
}
