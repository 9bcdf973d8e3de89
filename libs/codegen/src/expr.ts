import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { bool, commonType, float32, isArithmetic, isIntegral, pointer, promote, sameType, typeRange, typeToString } from './cType.ts';
import type { ArithmeticType, CType, FloatType, IntType } from './cType.ts';
import type { ArithmeticOp, ComparisonOp, CValue, ShiftOp } from './cArithmetic.ts';
import type { Requirement } from './requirement.ts';

/** Unary operators: negate, complement, logical not, dereference, address-of. */
export type UnaryOp = '-' | '~' | '!' | '*' | '&';
/** Logical operators (short-circuit, bool result). */
export type LogicalOp = '&&' | '||';
/** Every binary operator. */
export type BinaryOp = ArithmeticOp | ShiftOp | ComparisonOp | LogicalOp;

/** An inclusive integer interval `[min, max]` (bigint bounds). */
export interface IntRange {
  readonly min: bigint;
  readonly max: bigint;
}

/** A literal constant. Integers hold a bigint in the type's range, floats a number, bool a boolean. */
export interface LiteralExpr {
  readonly kind: 'literal';
  readonly type: ArithmeticType;
  readonly value: CValue;
}

/**
 * A named variable (local, parameter, global). `range`, when present, is a promise by whoever made the
 * variable (e.g. "a lane index in [0, 31]"); the simplifier may rely on it and `evaluate` checks it.
 */
export interface VarExpr {
  readonly kind: 'var';
  readonly type: CType;
  readonly name: string;
  readonly range: IntRange | null;
}

/** `op operand`. */
export interface UnaryExpr {
  readonly kind: 'unary';
  readonly type: CType;
  readonly op: UnaryOp;
  readonly operand: Expr;
}

/** `lhs op rhs`, with C++ operand conversions implied by `type`. */
export interface BinaryExpr {
  readonly kind: 'binary';
  readonly type: CType;
  readonly op: BinaryOp;
  readonly lhs: Expr;
  readonly rhs: Expr;
}

/** `cond ? ifTrue : ifFalse` (only the chosen branch is evaluated). */
export interface SelectExpr {
  readonly kind: 'select';
  readonly type: CType;
  readonly cond: Expr;
  readonly ifTrue: Expr;
  readonly ifFalse: Expr;
}

/** An explicit conversion to `type` (`static_cast`, or `reinterpret_cast` between pointers). */
export interface CastExpr {
  readonly kind: 'cast';
  readonly type: CType;
  readonly operand: Expr;
}

/**
 * A call of a named function or intrinsic with a declared result type. `pure` calls (no side effects,
 * no collective semantics) may be dropped or folded by the simplifier; impure ones (shuffles,
 * barriers) never are.
 */
export interface CallExpr {
  readonly kind: 'call';
  readonly type: CType;
  readonly callee: string;
  readonly templateArgs: readonly string[];
  readonly args: readonly Expr[];
  readonly pure: boolean;
  readonly range: IntRange | null;
  readonly requires: readonly Requirement[];
}

/** `object.field` or `object->field` with a declared field type (e.g. `threadIdx.x`). */
export interface MemberExpr {
  readonly kind: 'member';
  readonly type: CType;
  readonly object: Expr;
  readonly field: string;
  readonly arrow: boolean;
  readonly range: IntRange | null;
}

/** `base[index]` on a pointer or array. */
export interface IndexExpr {
  readonly kind: 'index';
  readonly type: CType;
  readonly base: Expr;
  readonly index: Expr;
}

/**
 * Text emitted as is, treated as a primary expression of the declared type: the escape hatch for a
 * leaf primitive. The caller guarantees it is self-delimiting (parenthesized if it is an operator
 * expression).
 */
export interface VerbatimExpr {
  readonly kind: 'verbatim';
  readonly type: CType;
  readonly text: string;
  readonly pure: boolean;
  readonly range: IntRange | null;
  readonly requires: readonly Requirement[];
}

/** An immutable, typed C++ expression tree. */
export type Expr =
  LiteralExpr | VarExpr | UnaryExpr | BinaryExpr | SelectExpr | CastExpr | CallExpr | MemberExpr | IndexExpr | VerbatimExpr;

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const qualifiedIdentifier = /^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Is `s` a plain C++ identifier (letters, digits, underscore; not starting with a digit)? */
export function isIdentifier(s: string): boolean {
  return identifier.test(s);
}

function checkRange(what: string, type: CType, range: IntRange | null | undefined): IntRange | null {
  if (range === null || range === undefined) return null;
  if (type.kind !== 'int' && type.kind !== 'bool') {
    throw new CodegenTypeError(what, 'a range is only meaningful on an integer type', typeToString(type));
  }
  const full = typeRange(type);
  if (range.min > range.max || range.min < full.min || range.max > full.max) {
    throw new ArgumentError(what, `range must satisfy ${full.min} <= min <= max <= ${full.max}`, range);
  }
  return Object.freeze({ min: range.min, max: range.max });
}

/**
 * A literal of type `type`. Integers must be integral and in range (number or bigint); floats must be
 * finite and are rounded to the type (`Math.fround` for float32); bool takes a boolean.
 */
export function makeLiteral(value: number | bigint | boolean, type: ArithmeticType): LiteralExpr {
  let v: CValue;
  if (type.kind === 'bool') {
    if (typeof value !== 'boolean') throw new ArgumentError('value', 'a bool literal takes true or false', value);
    v = value;
  } else if (type.kind === 'int') {
    if (typeof value === 'boolean' || (typeof value === 'number' && !Number.isSafeInteger(value))) {
      throw new ArgumentError('value', `an ${type.cpp} literal takes a safe integer or a bigint`, value);
    }
    const b = BigInt(value);
    if (b < type.min || b > type.max) {
      throw new ArgumentError('value', `must lie in [${type.min}, ${type.max}] for ${type.cpp}`, value);
    }
    v = b;
  } else {
    if (typeof value === 'boolean') throw new ArgumentError('value', `a ${type.cpp} literal takes a number`, value);
    const n = Number(value);
    if (!Number.isFinite(n)) throw new ArgumentError('value', `a ${type.cpp} literal must be finite`, value);
    v = type === float32 ? Math.fround(n) : n;
  }
  return Object.freeze({ kind: 'literal', type, value: v });
}

/** A variable reference. `name` is an identifier, optionally `::`-qualified. */
export function makeVar(name: string, type: CType, range?: IntRange | null): VarExpr {
  if (!qualifiedIdentifier.test(name)) throw new ArgumentError('name', 'must be a C++ identifier', name);
  if (type.kind === 'void') throw new CodegenTypeError(name, 'a variable cannot have type void');
  return Object.freeze({ kind: 'var', type, name, range: checkRange(name, type, range) });
}

function requireArithmetic(what: string, e: Expr): ArithmeticType {
  if (!isArithmetic(e.type)) throw new CodegenTypeError(what, 'must have an arithmetic type', typeToString(e.type));
  return e.type;
}

function requireIntegral(what: string, e: Expr): IntType {
  if (!isIntegral(e.type)) throw new CodegenTypeError(what, 'must have an integer or bool type', typeToString(e.type));
  return promote(e.type) as IntType;
}

function isBoolTestable(t: CType): boolean {
  return isArithmetic(t) || t.kind === 'pointer';
}

/** Is `e` an lvalue we can take the address of or assign to (variable, member, element, `*p`)? */
export function isLvalue(e: Expr): boolean {
  return e.kind === 'var' || e.kind === 'member' || e.kind === 'index' || (e.kind === 'unary' && e.op === '*');
}

/** The result type of `op operand`, or a `CodegenTypeError`. */
export function unaryResultType(op: UnaryOp, operand: Expr): CType {
  switch (op) {
    case '-':
      return promote(requireArithmetic('operand of unary -', operand));
    case '~':
      return requireIntegral('operand of ~', operand);
    case '!':
      if (!isBoolTestable(operand.type)) {
        throw new CodegenTypeError('operand of !', 'must be arithmetic or a pointer', typeToString(operand.type));
      }
      return bool;
    case '*':
      if (operand.type.kind !== 'pointer' || operand.type.pointee.kind === 'void') {
        throw new CodegenTypeError('operand of unary *', 'must be a pointer to a complete type', typeToString(operand.type));
      }
      return operand.type.pointee;
    case '&':
      if (!isLvalue(operand)) throw new CodegenTypeError('operand of unary &', 'must be an lvalue', operand.kind);
      if (operand.type.kind === 'array') return pointer(operand.type.element);
      return pointer(operand.type);
  }
}

/** An unsimplified unary node (see `neg`, `bitNot`, `not`, `deref`, `addressOf` for the folding forms). */
export function makeUnary(op: UnaryOp, operand: Expr): UnaryExpr {
  return Object.freeze({ kind: 'unary', type: unaryResultType(op, operand), op, operand });
}

/** The type both operands of an arithmetic/comparison operator are converted to, if arithmetic. */
export function operandType(op: BinaryOp, lhs: Expr, rhs: Expr): IntType | FloatType | null {
  if (op === '&&' || op === '||') return null;
  if (op === '<<' || op === '>>') return promote(lhs.type as ArithmeticType) as IntType;
  if (isArithmetic(lhs.type) && isArithmetic(rhs.type)) return commonType(lhs.type, rhs.type);
  return null;
}

/** The result type of `lhs op rhs` under C++ rules, or a `CodegenTypeError`. */
export function binaryResultType(op: BinaryOp, lhs: Expr, rhs: Expr): CType {
  const where = `operands of ${op}`;
  switch (op) {
    case '+':
    case '-':
      if (lhs.type.kind === 'pointer' && isIntegral(rhs.type)) return lhs.type;
      if (op === '+' && rhs.type.kind === 'pointer' && isIntegral(lhs.type)) return rhs.type;
      return commonType(requireArithmetic(where, lhs), requireArithmetic(where, rhs));
    case '*':
    case '/':
      return commonType(requireArithmetic(where, lhs), requireArithmetic(where, rhs));
    case '%':
    case '&':
    case '|':
    case '^':
      requireIntegral(where, lhs);
      requireIntegral(where, rhs);
      return commonType(lhs.type as ArithmeticType, rhs.type as ArithmeticType);
    case '<<':
    case '>>':
      requireIntegral(where, rhs);
      return requireIntegral(where, lhs);
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (lhs.type.kind === 'pointer' && rhs.type.kind === 'pointer') {
        if (!sameType(lhs.type.pointee, rhs.type.pointee)) {
          throw new CodegenTypeError(where, 'pointers must point to the same type', `${typeToString(lhs.type)}, ${typeToString(rhs.type)}`);
        }
        return bool;
      }
      requireArithmetic(where, lhs);
      requireArithmetic(where, rhs);
      return bool;
    case '&&':
    case '||':
      if (!isBoolTestable(lhs.type) || !isBoolTestable(rhs.type)) {
        throw new CodegenTypeError(where, 'must be arithmetic or pointers', `${typeToString(lhs.type)}, ${typeToString(rhs.type)}`);
      }
      return bool;
  }
}

/** An unsimplified binary node (see `add`, `mul`, ... for the folding forms). */
export function makeBinary(op: BinaryOp, lhs: Expr, rhs: Expr): BinaryExpr {
  return Object.freeze({ kind: 'binary', type: binaryResultType(op, lhs, rhs), op, lhs, rhs });
}

/** The type of `cond ? a : b`: the shared type, or the usual arithmetic conversion of both. */
export function selectResultType(cond: Expr, ifTrue: Expr, ifFalse: Expr): CType {
  if (!isBoolTestable(cond.type)) throw new CodegenTypeError('condition of ?:', 'must be arithmetic or a pointer', typeToString(cond.type));
  if (sameType(ifTrue.type, ifFalse.type)) {
    if (ifTrue.type.kind === 'array') throw new CodegenTypeError('branches of ?:', 'cannot be arrays');
    return ifTrue.type;
  }
  if (isArithmetic(ifTrue.type) && isArithmetic(ifFalse.type)) return commonType(ifTrue.type, ifFalse.type);
  throw new CodegenTypeError(
    'branches of ?:',
    'must have the same type or both be arithmetic',
    `${typeToString(ifTrue.type)}, ${typeToString(ifFalse.type)}`,
  );
}

/** An unsimplified `?:` node. */
export function makeSelect(cond: Expr, ifTrue: Expr, ifFalse: Expr): SelectExpr {
  return Object.freeze({ kind: 'select', type: selectResultType(cond, ifTrue, ifFalse), cond, ifTrue, ifFalse });
}

/**
 * Check that `from` may be cast to `to`: arithmetic to arithmetic, pointer to pointer (without
 * dropping `const`), and to or from an opaque type (its constructors/conversions decide).
 */
export function checkCast(from: CType, to: CType): void {
  const ok =
    (isArithmetic(from) && isArithmetic(to)) ||
    (from.kind === 'pointer' && to.kind === 'pointer' && (!from.constPointee || to.constPointee)) ||
    (from.kind === 'opaque' && to.kind !== 'void' && to.kind !== 'array') ||
    (to.kind === 'opaque' && from.kind !== 'void' && from.kind !== 'array');
  if (!ok) throw new CodegenTypeError('cast', `cannot cast ${typeToString(from)} to ${typeToString(to)}`);
}

/** An unsimplified cast node. */
export function makeCast(operand: Expr, type: CType): CastExpr {
  checkCast(operand.type, type);
  return Object.freeze({ kind: 'cast', type, operand });
}

/** Options of a call node. */
export interface CallOptions {
  /** Template arguments printed as `callee<a, b>(...)`, verbatim. */
  readonly templateArgs?: readonly string[];
  /** No side effects and no collective semantics (default false). */
  readonly pure?: boolean;
  /** Known range of an integer result. */
  readonly range?: IntRange;
  /** Headers/snippets the callee needs. */
  readonly requires?: readonly Requirement[];
}

/** A call `callee<templateArgs>(args)` returning `type`. */
export function makeCall(callee: string, args: readonly Expr[], type: CType, options: CallOptions = {}): CallExpr {
  if (!qualifiedIdentifier.test(callee)) throw new ArgumentError('callee', 'must be a (qualified) C++ identifier', callee);
  args.forEach((a, i) => {
    if (a.type.kind === 'void') throw new CodegenTypeError(`argument ${i} of ${callee}`, 'cannot be void');
  });
  return Object.freeze({
    kind: 'call',
    type,
    callee,
    templateArgs: Object.freeze([...(options.templateArgs ?? [])]),
    args: Object.freeze([...args]),
    pure: options.pure ?? false,
    range: checkRange(`result of ${callee}`, type, options.range),
    requires: Object.freeze([...(options.requires ?? [])]),
  });
}

/** `object.field` (or `object->field` when `object` is a pointer) of type `type`. */
export function makeMember(object: Expr, field: string, type: CType, range?: IntRange): MemberExpr {
  if (!identifier.test(field)) throw new ArgumentError('field', 'must be a C++ identifier', field);
  const arrow = object.type.kind === 'pointer';
  const inner = object.type.kind === 'pointer' ? object.type.pointee : object.type;
  if (inner.kind !== 'opaque')
    throw new CodegenTypeError(`object of .${field}`, 'must be an opaque (struct) type or a pointer to one', typeToString(object.type));
  return Object.freeze({ kind: 'member', type, object, field, arrow, range: checkRange(`.${field}`, type, range) });
}

/** `base[index]` on a pointer or array, with an integer index. */
export function makeIndex(base: Expr, index: Expr): IndexExpr {
  requireIntegral('index', index);
  let type: CType;
  if (base.type.kind === 'pointer') type = base.type.pointee;
  else if (base.type.kind === 'array') type = base.type.element;
  else throw new CodegenTypeError('base of []', 'must be a pointer or an array', typeToString(base.type));
  if (type.kind === 'void') throw new CodegenTypeError('base of []', 'cannot index a void pointer');
  return Object.freeze({ kind: 'index', type, base, index });
}

/** Options of a verbatim expression. */
export interface VerbatimOptions {
  readonly pure?: boolean;
  readonly range?: IntRange;
  readonly requires?: readonly Requirement[];
}

/** Text emitted as is (a self-delimiting primary expression of type `type`). */
export function makeVerbatim(text: string, type: CType, options: VerbatimOptions = {}): VerbatimExpr {
  if (text.trim() === '' || /[\n;]/.test(text)) throw new ArgumentError('text', 'must be a one-line expression without ";"', text);
  return Object.freeze({
    kind: 'verbatim',
    type,
    text,
    pure: options.pure ?? false,
    range: checkRange('verbatim', type, options.range),
    requires: Object.freeze([...(options.requires ?? [])]),
  });
}

/** The direct children of a node, in evaluation-order-agnostic source order. */
export function children(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case 'unary':
    case 'cast':
      return [e.operand];
    case 'binary':
      return [e.lhs, e.rhs];
    case 'select':
      return [e.cond, e.ifTrue, e.ifFalse];
    case 'call':
      return e.args;
    case 'member':
      return [e.object];
    case 'index':
      return [e.base, e.index];
    default:
      return [];
  }
}

const pureCache = new WeakMap<Expr, boolean>();

/**
 * Has `e` no side effects and no collective semantics (no impure call or verbatim anywhere)? Pure
 * subtrees may be dropped (`x * 0 → 0`) or deduplicated by the simplifier.
 */
export function isPure(e: Expr): boolean {
  const hit = pureCache.get(e);
  if (hit !== undefined) return hit;
  const own = e.kind === 'call' || e.kind === 'verbatim' ? e.pure : true;
  const r = own && children(e).every(isPure);
  pureCache.set(e, r);
  return r;
}

function sameRange(a: IntRange | null, b: IntRange | null): boolean {
  return a === b || (a !== null && b !== null && a.min === b.min && a.max === b.max);
}

/** Structural equality of two expression trees (types, operators, names, values, options). */
export function exprEquals(a: Expr, b: Expr): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || !sameType(a.type, b.type)) return false;
  switch (a.kind) {
    case 'literal':
      return Object.is(a.value, (b as LiteralExpr).value);
    case 'var':
      return a.name === (b as VarExpr).name && sameRange(a.range, (b as VarExpr).range);
    case 'unary':
      return a.op === (b as UnaryExpr).op && exprEquals(a.operand, (b as UnaryExpr).operand);
    case 'binary': {
      const o = b as BinaryExpr;
      return a.op === o.op && exprEquals(a.lhs, o.lhs) && exprEquals(a.rhs, o.rhs);
    }
    case 'select': {
      const o = b as SelectExpr;
      return exprEquals(a.cond, o.cond) && exprEquals(a.ifTrue, o.ifTrue) && exprEquals(a.ifFalse, o.ifFalse);
    }
    case 'cast':
      return exprEquals(a.operand, (b as CastExpr).operand);
    case 'call': {
      const o = b as CallExpr;
      return (
        a.callee === o.callee &&
        a.pure === o.pure &&
        a.templateArgs.join(',') === o.templateArgs.join(',') &&
        a.args.length === o.args.length &&
        a.args.every((x, i) => exprEquals(x, o.args[i] as Expr))
      );
    }
    case 'member': {
      const o = b as MemberExpr;
      return a.field === o.field && a.arrow === o.arrow && exprEquals(a.object, o.object);
    }
    case 'index': {
      const o = b as IndexExpr;
      return exprEquals(a.base, o.base) && exprEquals(a.index, o.index);
    }
    case 'verbatim':
      return a.text === (b as VerbatimExpr).text;
  }
}
