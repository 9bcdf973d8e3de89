import { EvaluationError, UndefinedBehaviorError } from './errors.ts';
import { applyArithmetic, applyComparison, applyComplement, applyNegate, applyShift, convertValue } from './cArithmetic.ts';
import { bool, isArithmetic, promote, typeToString } from './cType.ts';
import type { ArithmeticType, CType, FloatType, IntType } from './cType.ts';
import type { ArithmeticOp, ComparisonOp, CValue, ShiftOp } from './cArithmetic.ts';
import { operandType } from './expr.ts';
import type { Expr, IntRange } from './expr.ts';
import { printExpr } from './printExpr.ts';

/** A scalar as `evaluate` takes and returns it: 8-32-bit integers and floats as number, 64-bit integers as bigint, bool as boolean. */
export type Scalar = number | bigint | boolean;

/**
 * What a name is bound to: a scalar; an array (for `name[i]`); or a function (for calls of that
 * callee, receiving and returning scalars). Members and verbatim nodes are looked up by their
 * printed text (`"threadIdx.x"`).
 */
export type Binding = Scalar | readonly Scalar[] | ((...args: Scalar[]) => Scalar);

/** Name → binding. */
export type Bindings = Readonly<Record<string, Binding>>;

function toScalar(v: CValue, t: CType): Scalar {
  if (typeof v === 'bigint') return t.kind === 'int' && t.bits === 64 ? v : Number(v);
  return v;
}

function fromScalar(v: Binding | undefined, t: CType, what: string, range: IntRange | null): CValue {
  if (v === undefined) throw new EvaluationError('codegen/unbound', `${what}: no binding`);
  const bad = (rule: string): EvaluationError =>
    new EvaluationError('codegen/binding-out-of-range', `${what}: ${rule} (got ${typeof v === 'bigint' ? `${v}n` : String(v)})`);
  let out: CValue;
  if (t.kind === 'int') {
    if (typeof v === 'number' && Number.isSafeInteger(v)) out = BigInt(v);
    else if (typeof v === 'bigint') out = v;
    else throw bad(`an ${t.cpp} needs a safe integer or a bigint`);
    if (out < t.min || out > t.max) throw bad(`must lie in [${t.min}, ${t.max}] for ${t.cpp}`);
    if (range !== null && (out < range.min || out > range.max)) throw bad(`must lie in the declared range [${range.min}, ${range.max}]`);
    return out;
  }
  if (t.kind === 'bool') {
    if (typeof v !== 'boolean') throw bad('a bool needs true or false');
    if (range !== null && (BigInt(v) < range.min || BigInt(v) > range.max)) throw bad('outside the declared range');
    return v;
  }
  if (t.kind === 'float') {
    if (typeof v !== 'number') throw bad(`a ${t.cpp} needs a number`);
    return convertValue(v, t);
  }
  throw new EvaluationError('codegen/not-evaluable', `${what}: values of type ${typeToString(t)} have no TS meaning`);
}

function notEvaluable(e: Expr, why: string): EvaluationError {
  return new EvaluationError('codegen/not-evaluable', `${printExpr(e)}: ${why}`);
}

function asArithmetic(v: CValue, from: CType, to: ArithmeticType, e: Expr): CValue {
  if (!isArithmetic(from)) throw notEvaluable(e, `operand of type ${typeToString(from)}`);
  return convertValue(v, to);
}

function evalNode(e: Expr, env: Bindings): CValue {
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'var':
      return fromScalar(env[e.name], e.type, e.name, e.range);
    case 'member':
    case 'verbatim': {
      const key = printExpr(e);
      return fromScalar(env[key], e.type, key, e.range);
    }
    case 'index': {
      if (e.base.kind !== 'var') throw notEvaluable(e, 'only a variable bound to an array can be indexed');
      const arr = env[e.base.name];
      if (!Array.isArray(arr)) throw new EvaluationError('codegen/unbound', `${e.base.name}: no array binding`);
      const i = convertValue(evalNode(e.index, env), promote(e.index.type as ArithmeticType)) as bigint;
      if (i < 0n || i >= BigInt(arr.length)) {
        throw new UndefinedBehaviorError('index-out-of-bounds', `${e.base.name}[${i}] of ${arr.length} elements`);
      }
      return fromScalar(arr[Number(i)] as Scalar, e.type, `${e.base.name}[${i}]`, null);
    }
    case 'call': {
      const fn = env[e.callee];
      if (typeof fn !== 'function') {
        throw new EvaluationError('codegen/unbound', `${e.callee}: no function binding for the call ${printExpr(e)}`);
      }
      const args = e.args.map((a) => toScalar(evalNode(a, env), a.type));
      return fromScalar(fn(...args), e.type, `result of ${e.callee}`, e.range);
    }
    case 'unary': {
      if (e.op === '*' || e.op === '&') throw notEvaluable(e, 'pointers have no TS meaning');
      const v = evalNode(e.operand, env);
      if (e.op === '!') return !asArithmetic(v, e.operand.type, bool, e);
      const t = e.type as IntType | FloatType;
      const x = asArithmetic(v, e.operand.type, t, e);
      return e.op === '-' ? applyNegate(t, x) : applyComplement(t as IntType, x as bigint);
    }
    case 'binary': {
      if (e.op === '&&' || e.op === '||') {
        const l = asArithmetic(evalNode(e.lhs, env), e.lhs.type, bool, e) as boolean;
        if (e.op === '&&' ? !l : l) return l;
        return asArithmetic(evalNode(e.rhs, env), e.rhs.type, bool, e);
      }
      const t = operandType(e.op, e.lhs, e.rhs);
      if (t === null || e.type.kind === 'pointer') throw notEvaluable(e, 'pointer arithmetic has no TS meaning');
      const l = asArithmetic(evalNode(e.lhs, env), e.lhs.type, t, e);
      if (e.op === '<<' || e.op === '>>') {
        const count = asArithmetic(evalNode(e.rhs, env), e.rhs.type, promote(e.rhs.type as ArithmeticType), e) as bigint;
        return applyShift(e.op as ShiftOp, t as IntType, l as bigint, count);
      }
      const r = asArithmetic(evalNode(e.rhs, env), e.rhs.type, t, e);
      if (e.type.kind === 'bool') return applyComparison(e.op as ComparisonOp, l, r);
      return applyArithmetic(e.op as ArithmeticOp, t, l, r);
    }
    case 'select': {
      const c = asArithmetic(evalNode(e.cond, env), e.cond.type, bool, e) as boolean;
      const branch = c ? e.ifTrue : e.ifFalse;
      const v = evalNode(branch, env);
      return isArithmetic(e.type) ? asArithmetic(v, branch.type, e.type, e) : v;
    }
    case 'cast': {
      if (!isArithmetic(e.type)) throw notEvaluable(e, `a cast to ${typeToString(e.type)} has no TS meaning`);
      return asArithmetic(evalNode(e.operand, env), e.operand.type, e.type, e);
    }
  }
}

/**
 * Evaluate an expression with exact C++ semantics (the reference the emitted code is tested
 * against): integer arithmetic in bigint with unsigned wraparound, truncating `/`, dividend-signed
 * `%`, arithmetic `>>`, the usual arithmetic conversions, binary32 rounding for float, and
 * short-circuit `&&`, `||`, `?:`. Undefined behaviour (signed overflow, division by zero, shift
 * count out of range, negative `<<`, out-of-range float→int) throws `UndefinedBehaviorError`
 * instead of producing a value; unbound names or out-of-range bindings throw `EvaluationError`.
 *
 * Returns 8-32-bit integers and floats as number, 64-bit integers as bigint, bool as boolean.
 */
export function evaluate(e: Expr, bindings: Bindings = {}): Scalar {
  if (e.type.kind === 'void') throw notEvaluable(e, 'a void expression has no value');
  return toScalar(evalNode(e, bindings), e.type);
}

/** `evaluate`, but a thrown `UndefinedBehaviorError` becomes `undefined` (for property tests). */
export function evaluateDefined(e: Expr, bindings: Bindings = {}): Scalar | undefined {
  try {
    return evaluate(e, bindings);
  } catch (err) {
    if (err instanceof UndefinedBehaviorError) return undefined;
    throw err;
  }
}
