// Symbolic integers: the lengths, strides and offsets of layouts that depend on kernel arguments.
export { add, mul, neg, product, scale, sub, sum } from './poly.ts';
export { ceilDiv, floorDiv, mod, proveLessEqual, proveLessThan, proveNonNegative, roundUp, xor } from './simplify.ts';
export { indexVar, INT32_MAX, symbol, symIntToString } from './symbol.ts';
export { checkBindings, evaluateSymInt, freeSymbols, NO_BINDINGS, type Bindings } from './evaluate.ts';
export { divisorOf, intervalOf, type BoundsMode, type Interval } from './bounds.ts';
export { formatSymInt, hasVars, isStatic, keyOf, SymExpr, symEquals, type Atom, type SymbolDomain, type SymInt } from './expr.ts';
