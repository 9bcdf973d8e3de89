import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { bool, float32, float64, int32, int64, promote, uint32, uint64 } from './cType.ts';
import type { ArithmeticType, CType, IntType } from './cType.ts';
import {
  isPure,
  makeBinary,
  makeCall,
  makeCast,
  makeIndex,
  makeLiteral,
  makeMember,
  makeSelect,
  makeUnary,
  makeVar,
  makeVerbatim,
} from './expr.ts';
import type { BinaryOp, CallOptions, Expr, IntRange, LiteralExpr, UnaryOp, VarExpr, VerbatimOptions } from './expr.ts';
import { simplifyNode } from './simplify.ts';

/**
 * An operand: an expression, or a JS value turned into a literal. Next to a typed operand a JS
 * number takes that operand's type: an integer next to an integer operand becomes a literal of its
 * promoted type when it fits (`add(u, 1)` → `u + 1u`), a number next to a float operand becomes a
 * literal of that float type (`mul(f, 0.5)` → `f * 0.5f`). Otherwise `lit`'s default typing applies.
 */
export type ExprLike = Expr | number | bigint | boolean;

/** Is `x` an expression node (not a JS value)? */
export function isExpr(x: unknown): x is Expr {
  return typeof x === 'object' && x !== null && 'kind' in x && 'type' in x;
}

/**
 * A literal. With `type`, the value is checked against it. Without, C++ literal typing: booleans
 * are `bool`; integral numbers are `int` if they fit, else `long long`, else `unsigned long long`;
 * other numbers are `double`; bigints are `long long` if they fit, else `unsigned long long`.
 */
export function lit(value: number | bigint | boolean, type?: ArithmeticType): LiteralExpr {
  if (type !== undefined) return makeLiteral(value, type);
  if (typeof value === 'boolean') return makeLiteral(value, bool);
  if (typeof value === 'number' && !Number.isInteger(value)) return makeLiteral(value, float64);
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new ArgumentError('value', 'an integer literal from a number must be a safe integer (use a bigint)', value);
  }
  const b = BigInt(value);
  if (typeof value === 'number' && b >= int32.min && b <= int32.max) return makeLiteral(b, int32);
  if (b >= int64.min && b <= int64.max) return makeLiteral(b, int64);
  return makeLiteral(b, uint64);
}

/** An `int` literal. */
export const i32 = (v: number | bigint): LiteralExpr => makeLiteral(v, int32);
/** An `unsigned int` literal. */
export const u32 = (v: number | bigint): LiteralExpr => makeLiteral(v, uint32);
/** A `long long` literal. */
export const i64 = (v: number | bigint): LiteralExpr => makeLiteral(v, int64);
/** An `unsigned long long` literal. */
export const u64 = (v: number | bigint): LiteralExpr => makeLiteral(v, uint64);
/** A `float` literal (the value is rounded to binary32). */
export const f32 = (v: number): LiteralExpr => makeLiteral(v, float32);
/** A `double` literal. */
export const f64 = (v: number): LiteralExpr => makeLiteral(v, float64);

/** Options of a variable reference. */
export interface VariableOptions {
  /** Known inclusive range of an integer variable (the simplifier relies on it; `evaluate` checks it). */
  readonly range?: IntRange | readonly [number | bigint, number | bigint];
}

/** Normalize `[min, max]` or `{ min, max }` to an `IntRange`. */
export function toRange(r: IntRange | readonly [number | bigint, number | bigint]): IntRange {
  if ('min' in r) return r;
  return { min: BigInt(r[0]), max: BigInt(r[1]) };
}

/**
 * A reference to a variable that exists in the emitted code (a parameter, a global, a builtin).
 * Builders hand these out for the names they declare (`b.let`); make one directly only for names
 * declared elsewhere.
 */
export function variable(name: string, type: CType, options: VariableOptions = {}): VarExpr {
  return makeVar(name, type, options.range === undefined ? null : toRange(options.range));
}

function fits(t: IntType, v: bigint): boolean {
  return v >= t.min && v <= t.max;
}

/** Turn an operand into an expression, typing a JS value after `other` (see `ExprLike`). */
export function toExpr(x: ExprLike, other?: ExprLike): Expr {
  if (isExpr(x)) return x;
  if (typeof x === 'boolean' || other === undefined || !isExpr(other)) return lit(x);
  const t = other.type;
  if (t.kind === 'float') return makeLiteral(Number(x), t);
  const integral = typeof x === 'bigint' || Number.isInteger(x);
  if (integral && (t.kind === 'int' || t.kind === 'bool')) {
    const p = promote(t) as IntType;
    if (fits(p, BigInt(x))) return makeLiteral(x, p);
  }
  return lit(x);
}

function pair(a: ExprLike, b: ExprLike): [Expr, Expr] {
  return [toExpr(a, b), toExpr(b, a)];
}

/** `a op b`, folded (see `simplifyNode` for the rules). */
export function binary(op: BinaryOp, a: ExprLike, b: ExprLike): Expr {
  // A shift's operands are typed independently (its result has the left operand's type).
  const [x, y] = op === '<<' || op === '>>' ? [toExpr(a), toExpr(b)] : pair(a, b);
  return simplifyNode(makeBinary(op, x, y));
}

/** `op a`, folded. */
export function unary(op: UnaryOp, a: ExprLike): Expr {
  return simplifyNode(makeUnary(op, toExpr(a)));
}

/** `a + b` (also pointer + integer). */
export const add = (a: ExprLike, b: ExprLike): Expr => binary('+', a, b);
/** `a - b`. */
export const sub = (a: ExprLike, b: ExprLike): Expr => binary('-', a, b);
/** `a * b`. */
export const mul = (a: ExprLike, b: ExprLike): Expr => binary('*', a, b);
/** `a / b` (integers: truncates toward zero). */
export const div = (a: ExprLike, b: ExprLike): Expr => binary('/', a, b);
/** `a % b` (integers only; the sign of the dividend). */
export const mod = (a: ExprLike, b: ExprLike): Expr => binary('%', a, b);
/** `a << b`. */
export const shl = (a: ExprLike, b: ExprLike): Expr => binary('<<', a, b);
/** `a >> b` (arithmetic for signed). */
export const shr = (a: ExprLike, b: ExprLike): Expr => binary('>>', a, b);
/** `a & b`. */
export const bitAnd = (a: ExprLike, b: ExprLike): Expr => binary('&', a, b);
/** `a | b`. */
export const bitOr = (a: ExprLike, b: ExprLike): Expr => binary('|', a, b);
/** `a ^ b`. */
export const bitXor = (a: ExprLike, b: ExprLike): Expr => binary('^', a, b);
/** `a == b`. */
export const eq = (a: ExprLike, b: ExprLike): Expr => binary('==', a, b);
/** `a != b`. */
export const ne = (a: ExprLike, b: ExprLike): Expr => binary('!=', a, b);
/** `a < b`. */
export const lt = (a: ExprLike, b: ExprLike): Expr => binary('<', a, b);
/** `a <= b`. */
export const le = (a: ExprLike, b: ExprLike): Expr => binary('<=', a, b);
/** `a > b`. */
export const gt = (a: ExprLike, b: ExprLike): Expr => binary('>', a, b);
/** `a >= b`. */
export const ge = (a: ExprLike, b: ExprLike): Expr => binary('>=', a, b);
/** `a && b` (short-circuit). */
export const and = (a: ExprLike, b: ExprLike): Expr => binary('&&', a, b);
/** `a || b` (short-circuit). */
export const or = (a: ExprLike, b: ExprLike): Expr => binary('||', a, b);
/** `-a`. */
export const neg = (a: ExprLike): Expr => unary('-', a);
/** `~a`. */
export const bitNot = (a: ExprLike): Expr => unary('~', a);
/** `!a`. */
export const not = (a: ExprLike): Expr => unary('!', a);
/** `*p`. */
export const deref = (p: Expr): Expr => unary('*', p);
/** `&x` (x an lvalue). */
export const addressOf = (x: Expr): Expr => unary('&', x);

/** `cond ? a : b`, folded (only the chosen branch is evaluated). */
export function select(cond: ExprLike, a: ExprLike, b: ExprLike): Expr {
  const [x, y] = pair(a, b);
  return simplifyNode(makeSelect(toExpr(cond), x, y));
}

function requirePure(what: string, e: Expr): void {
  if (!isPure(e)) throw new CodegenTypeError(what, 'must be pure: it is emitted twice');
}

/** `a < b ? a : b` (both pure: each is emitted twice). */
export function minOf(a: ExprLike, b: ExprLike): Expr {
  const [x, y] = pair(a, b);
  requirePure('operands of minOf', x);
  requirePure('operands of minOf', y);
  return select(lt(x, y), x, y);
}

/** `a > b ? a : b` (both pure: each is emitted twice). */
export function maxOf(a: ExprLike, b: ExprLike): Expr {
  const [x, y] = pair(a, b);
  requirePure('operands of maxOf', x);
  requirePure('operands of maxOf', y);
  return select(gt(x, y), x, y);
}

/** `static_cast<type>(x)` (or `reinterpret_cast` between pointers), folded: a no-op cast disappears. */
export function cast(x: ExprLike, type: CType): Expr {
  return simplifyNode(makeCast(toExpr(x), type));
}

/** A call of `callee` with result `type`. Impure by default (never dropped); see `CallOptions`. */
export function call(callee: string, args: readonly ExprLike[], type: CType, options: CallOptions = {}): Expr {
  return makeCall(
    callee,
    args.map((a) => toExpr(a)),
    type,
    options,
  );
}

/** `object.field` / `object->field` of type `type` (e.g. `member(threadIdx, 'x', uint32)`). */
export function member(object: Expr, field: string, type: CType, range?: IntRange | readonly [number | bigint, number | bigint]): Expr {
  return range === undefined ? makeMember(object, field, type) : makeMember(object, field, type, toRange(range));
}

/** `base[i]` on a pointer or array. */
export function index(base: Expr, i: ExprLike): Expr {
  return makeIndex(base, toExpr(i));
}

/** Verbatim expression text of type `type` (a self-delimiting leaf primitive). */
export function verbatim(text: string, type: CType, options: VerbatimOptions = {}): Expr {
  return makeVerbatim(text, type, options);
}

/**
 * ±∞ of a float type (C++ has no literal for it): `__builtin_huge_valf()` / `__builtin_huge_val()`,
 * which g++, nvcc and clang all fold to the constant. The masked score and the empty row maximum
 * of attention kernels.
 */
export function infinity(type: CType, options: { readonly negative?: boolean } = {}): Expr {
  if (type.kind !== 'float') throw new ArgumentError('type', 'infinity needs a float type', type.kind);
  const inf = type.bits === 32 ? '__builtin_huge_valf()' : '__builtin_huge_val()';
  return verbatim(options.negative === true ? `(-${inf})` : inf, type, { pure: true });
}
