import fc from 'fast-check';
import { bool, int8, int32, int64, typeRange, uint16, uint32, uint64 } from '../cType.ts';
import type { IntType } from '../cType.ts';
import type { Bindings, Scalar } from '../evaluate.ts';
import { makeBinary, makeCast, makeLiteral, makeSelect, makeUnary } from '../expr.ts';
import type { BinaryOp, Expr, UnaryOp, VarExpr } from '../expr.ts';

/** Options of `intExprArbitrary`. */
export interface IntExprArbitraryOptions {
  /** Variables the trees may use (integer or bool typed). */
  readonly vars: readonly VarExpr[];
  /** Types of generated literals (default int32, with some uint32/int64). */
  readonly literalTypes?: readonly IntType[];
  /** Binary operators to use (default all). */
  readonly ops?: readonly BinaryOp[];
  /** Types casts may target (default int8, uint16, int32, uint32, int64, uint64, bool). */
  readonly castTypes?: readonly (IntType | typeof bool)[];
  /** Maximum depth (default 5). */
  readonly maxDepth?: number;
}

const allOps: readonly BinaryOp[] = ['+', '-', '*', '/', '%', '<<', '>>', '&', '|', '^', '==', '!=', '<', '<=', '>', '>=', '&&', '||'];

/** A literal of `t` biased to the values folding rules look for (0, ±1, powers of two, extremes). */
export function interestingIntArbitrary(t: IntType): fc.Arbitrary<bigint> {
  const special = [
    0n,
    1n,
    2n,
    3n,
    4n,
    7n,
    8n,
    16n,
    31n,
    32n,
    255n,
    256n,
    1024n,
    t.max,
    t.min,
    t.signed ? -1n : t.max - 1n,
    t.signed ? -8n : 15n,
  ].filter((v) => v >= t.min && v <= t.max);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...special) },
    { weight: 3, arbitrary: fc.bigInt({ min: t.signed ? -64n : 0n, max: 64n }) },
    { weight: 1, arbitrary: fc.bigInt({ min: t.min, max: t.max }) },
  );
}

/**
 * Random UNSIMPLIFIED integer/bool expression trees (built with the raw `make*` constructors) over
 * `vars`: every binary operator, unary `-`/`~`/`!`, `?:` and casts, with literals biased toward
 * folding-rule triggers. For property tests of `simplify`, `rangeOf` and emitted code.
 */
export function intExprArbitrary(options: IntExprArbitraryOptions): fc.Arbitrary<Expr> {
  const litTypes = options.literalTypes ?? [int32, int32, int32, uint32, int64];
  const ops = options.ops ?? allOps;
  const castTypes = options.castTypes ?? [int8, uint16, int32, int32, uint32, int64, uint64, bool];
  const literal = fc.constantFrom(...litTypes).chain((t) => interestingIntArbitrary(t).map((v) => makeLiteral(v, t) as Expr));
  const shiftCount = fc.integer({ min: 0, max: 40 }).map((k) => makeLiteral(k, int32) as Expr);
  const leaf = options.vars.length > 0 ? fc.oneof(fc.constantFrom(...options.vars), literal) : literal;
  const { expr } = fc.letrec<{ expr: Expr; node: Expr }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: options.maxDepth ?? 5, depthIdentifier: 'expr', depthSize: 'large' },
      { weight: 2, arbitrary: leaf },
      { weight: 3, arbitrary: tie('node') },
    ),
    node: fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(fc.constantFrom(...ops), tie('expr'), tie('expr'), shiftCount, fc.boolean())
          .map(([op, a, b, k, constCount]) => makeBinary(op, a, (op === '<<' || op === '>>') && constCount ? k : b) as Expr),
      },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom<UnaryOp>('-', '~', '!'), tie('expr')).map(([op, a]) => makeUnary(op, a) as Expr) },
      { weight: 1, arbitrary: fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, a, b]) => makeSelect(c, a, b) as Expr) },
      { weight: 1, arbitrary: fc.tuple(tie('expr'), fc.constantFrom(...castTypes)).map(([a, t]) => makeCast(a, t) as Expr) },
    ),
  }));
  return expr;
}

/** A value for `v` inside its type and declared range, biased toward the ends and small values, as `evaluate` takes it. */
export function varValueArbitrary(v: VarExpr): fc.Arbitrary<Scalar> {
  const t = v.type;
  if (t.kind === 'bool') return fc.boolean();
  if (t.kind !== 'int') throw new Error(`varValueArbitrary: ${v.name} is not an integer variable`);
  const r = v.range ?? typeRange(t);
  const clamp = (x: bigint): bigint => (x < r.min ? r.min : x > r.max ? r.max : x);
  const arb = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(r.min, r.max, clamp(0n), clamp(1n), clamp(-1n)) },
    { weight: 3, arbitrary: fc.bigInt({ min: clamp(-100n), max: clamp(100n) }) },
    { weight: 2, arbitrary: fc.bigInt({ min: r.min, max: r.max }) },
  );
  return arb.map((x) => (t.bits === 64 ? x : Number(x)));
}

/** Bindings for every variable in `vars` (see `varValueArbitrary`). */
export function bindingsArbitrary(vars: readonly VarExpr[]): fc.Arbitrary<Bindings> {
  const rec: Record<string, fc.Arbitrary<Scalar>> = {};
  for (const v of vars) rec[v.name] = varValueArbitrary(v);
  return fc.record(rec);
}
