import { UndefinedBehaviorError } from './errors.ts';
import { convertValue, fitsInt, wrapInt } from './cArithmetic.ts';
import { bool, float32, float64, int32, isArithmetic, isIntegral, sameType } from './cType.ts';
import type { CType, IntType } from './cType.ts';
import { evaluate } from './evaluate.ts';
import {
  children,
  exprEquals,
  isPure,
  makeBinary,
  makeCall,
  makeCast,
  makeIndex,
  makeLiteral,
  makeMember,
  makeSelect,
  makeUnary,
  operandType,
} from './expr.ts';
import type { BinaryExpr, BinaryOp, CastExpr, Expr, LiteralExpr, SelectExpr, UnaryExpr } from './expr.ts';
import type { ComparisonOp } from './cArithmetic.ts';
import { isKnownNonNegative, rangeAs, rangeOf } from './range.ts';

// This module holds the folding rules. Each rule is sound for every evaluation of the original
// expression that has no undefined behaviour (the `evaluate` property test checks exactly that):
// the simplified form gives the same value, and never has undefined behaviour where the original
// had none. Signed overflow is UB, so rules may assume it does not happen in the ORIGINAL; whenever
// a rule creates a NEW intermediate value (e.g. `x + y` out of `(x + 1) + y`) it proves that value
// in range with `rangeOf` first.

type Op = BinaryOp;

const isLiteral = (e: Expr): e is LiteralExpr => e.kind === 'literal';
const pow2 = (k: number): bigint => 1n << BigInt(k);

/** log2(v) when v is a power of two ≥ 2, else -1. */
function log2Exact(v: bigint): number {
  if (v < 2n || (v & (v - 1n)) !== 0n) return -1;
  return v.toString(2).length - 1;
}

/** The value of an integral literal converted to `t`, or undefined. */
function intConst(e: Expr, t: IntType): bigint | undefined {
  if (e.kind !== 'literal' || !isIntegral(e.type)) return undefined;
  return convertValue(e.value, t) as bigint;
}

function litT(t: IntType, v: bigint): LiteralExpr {
  return makeLiteral(wrapInt(t, v), t);
}

/** `x` converted to `t` (a simplified cast, or `x` itself). */
function conv(x: Expr, t: CType): Expr {
  return sameType(x.type, t) ? x : simplifyNode(makeCast(x, t));
}

/** `a op b` with operands converted to `t` where C++'s implicit conversions would not reach `t`. */
function rawT(op: Op, a: Expr, b: Expr, t: IntType): BinaryExpr {
  const n = makeBinary(op, a, b);
  const reached = op === '<<' || op === '>>' || n.type.kind === 'bool' ? operandType(op, a, b) : n.type;
  if (reached !== null && sameType(reached, t)) return n;
  return makeBinary(op, conv(a, t), op === '<<' || op === '>>' ? b : conv(b, t));
}

const binT = (op: Op, a: Expr, b: Expr, t: IntType): Expr => simplifyNode(rawT(op, a, b, t));

/** Does the exact (unbounded) result of `a op b` in `t` provably stay inside `t`? */
function exactFits(op: '+' | '-' | '*', a: Expr, b: Expr, t: IntType): boolean {
  const ra = rangeAs(a, t);
  const rb = rangeAs(b, t);
  let lo: bigint;
  let hi: bigint;
  if (op === '+') [lo, hi] = [ra.min + rb.min, ra.max + rb.max];
  else if (op === '-') [lo, hi] = [ra.min - rb.max, ra.max - rb.min];
  else {
    const p = [ra.min * rb.min, ra.min * rb.max, ra.max * rb.min, ra.max * rb.max];
    lo = p.reduce((x, y) => (x < y ? x : y));
    hi = p.reduce((x, y) => (x > y ? x : y));
  }
  return lo >= t.min && hi <= t.max;
}

/** A new intermediate `a op b` in `t` is safe: unsigned wraps harmlessly, signed must provably fit. */
const safeNew = (op: '+' | '-' | '*', a: Expr, b: Expr, t: IntType): boolean => !t.signed || exactFits(op, a, b, t);

/** `x` as a bool: itself, or `x != 0`. */
function toBool(x: Expr): Expr {
  if (x.type.kind === 'bool') return x;
  if (isArithmetic(x.type)) {
    const zero = x.type.kind === 'float' ? makeLiteral(0, x.type) : makeLiteral(0n, x.type.kind === 'int' ? x.type : int32);
    return simplifyNode(makeBinary('!=', x, zero));
  }
  return makeUnary('!', makeUnary('!', x));
}

function negT(x: Expr, t: IntType): Expr | undefined {
  if (t.signed && rangeAs(x, t).min <= t.min) return undefined;
  return simplifyNode(makeUnary('-', conv(x, t)));
}

/** `term + c` in `t`, printed with a non-negative constant (`x - 3`, not `x + -3`); undefined if c does not fit. */
function addConst(term: Expr, c: bigint, t: IntType): Expr | undefined {
  if (t.signed) {
    if (c === 0n) return conv(term, t);
    if (c < 0n && fitsInt(t, -c)) return rawT('-', term, litT(t, -c), t);
    return fitsInt(t, c) ? rawT('+', term, litT(t, c), t) : undefined;
  }
  const w = wrapInt(t, c);
  if (w === 0n) return conv(term, t);
  if (w > pow2(t.bits - 1)) return rawT('-', term, litT(t, pow2(t.bits) - w), t);
  return rawT('+', term, litT(t, w), t);
}

interface Linear {
  readonly term: Expr | null;
  readonly c: bigint;
}

/** Split `x` (evaluated in `t`) into `term + c`, looking one level into `y ± literal` of type `t`. */
function linearParts(x: Expr, t: IntType): Linear {
  const k = intConst(x, t);
  if (k !== undefined) return { term: null, c: k };
  if (x.kind === 'binary' && sameType(x.type, t) && (x.op === '+' || x.op === '-')) {
    const c = intConst(x.rhs, t);
    if (c !== undefined) return { term: x.lhs, c: x.op === '+' ? c : -c };
  }
  return { term: x, c: 0n };
}

/**
 * Reassociate additive constants: `(x + c1) + c2 → x + (c1 + c2)`, `(x + c1) + (y + c2) → (x + y) +
 * (c1 + c2)`, `c1 - (y + c2) → -y + (c1 - c2)`, and print the constant non-negative. For signed types
 * the combined constant must fit and any new `x ± y` / `-y` must provably not overflow.
 */
function linearRule(e: BinaryExpr, t: IntType): Expr | undefined {
  const a = linearParts(e.lhs, t);
  const b = linearParts(e.rhs, t);
  if (a.term !== null && b.term !== null && a.c === 0n && b.c === 0n) return undefined;
  if (a.term === null && b.term === null) return undefined;
  const plus = e.op === '+';
  const c = plus ? a.c + b.c : a.c - b.c;
  let term: Expr | undefined;
  if (b.term === null) term = a.term ?? undefined;
  else if (a.term === null) term = plus ? b.term : negT(b.term, t);
  else term = safeNew(plus ? '+' : '-', a.term, b.term, t) ? binT(e.op, a.term, b.term, t) : undefined;
  if (term === undefined) return undefined;
  const out = addConst(term, c, t);
  return out === undefined || exprEquals(out, e) ? undefined : out;
}

/** `y` when `x` is `y op literal` of type `t`, with the literal's value in `t`. */
function nestedConst(x: Expr, op: Op, t: IntType): { y: Expr; c: bigint } | undefined {
  if (x.kind !== 'binary' || x.op !== op || !sameType(x.type, t)) return undefined;
  const shift = op === '<<' || op === '>>';
  const c = shift ? intConst(x.rhs, int32) : intConst(x.rhs, t);
  return c === undefined ? undefined : { y: x.lhs, c };
}

/** For `y * c1` in unsigned `t`: does the product provably not wrap (so it may be divided exactly)? */
function mulNoWrap(y: Expr, c1: bigint, t: IntType): boolean {
  return !t.signed ? exactFits('*', y, litT(t, c1), t) : true;
}

const swapRelational: Partial<Record<Op, Op>> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '==': '==', '!=': '!=' };
const negateComparison: Partial<Record<Op, Op>> = { '<': '>=', '>=': '<', '>': '<=', '<=': '>', '==': '!=', '!=': '==' };
const commutative = new Set<Op>(['+', '*', '&', '|', '^']);

function intBinary(e: BinaryExpr, t: IntType): Expr | undefined {
  const { op, lhs, rhs } = e;
  const rc = op === '<<' || op === '>>' ? intConst(rhs, int32) : intConst(rhs, t);
  const lc = intConst(lhs, t);
  const zero = (): Expr => conv(litT(t, 0n), e.type);
  const same = isPure(lhs) && exprEquals(lhs, rhs);
  const allOnes = t.signed ? -1n : t.max;
  switch (op) {
    case '+':
      if (rc === 0n) return conv(lhs, e.type);
      return linearRule(e, t);
    case '-':
      if (rc === 0n) return conv(lhs, e.type);
      if (same) return zero();
      // 0 - x and -x overflow for the same x (INT_MIN), so no range proof is needed.
      if (lc === 0n) return simplifyNode(makeUnary('-', conv(rhs, t)));
      return linearRule(e, t);
    case '*': {
      if (rc === 0n && isPure(lhs)) return zero();
      if (rc === 1n) return conv(lhs, e.type);
      if (rc === -1n && t.signed) return simplifyNode(makeUnary('-', conv(lhs, t)));
      if (rc === undefined) return undefined;
      const m = nestedConst(lhs, '*', t);
      if (m !== undefined && (!t.signed || fitsInt(t, m.c * rc))) return binT('*', m.y, litT(t, m.c * rc), t);
      // (x + c1) * c2 → x * c2 + c1 * c2
      const p = linearParts(lhs, t);
      if (p.term !== null && p.c !== 0n && safeNew('*', p.term, litT(t, rc), t)) {
        return addConst(binT('*', p.term, litT(t, rc), t), p.c * rc, t);
      }
      return undefined;
    }
    case '/': {
      if (rc === 1n) return conv(lhs, e.type);
      if (rc === -1n && t.signed) return simplifyNode(makeUnary('-', conv(lhs, t)));
      if (lc === 0n && isPure(rhs)) return zero();
      if (same) return conv(litT(t, 1n), e.type);
      if (rc === undefined || rc === 0n) return undefined;
      const m = nestedConst(lhs, '*', t);
      if (m !== undefined && mulNoWrap(m.y, m.c, t)) {
        if (m.c % rc === 0n) return binT('*', m.y, litT(t, m.c / rc), t);
        if (m.c > 0n && rc > 0n && rc % m.c === 0n) return binT('/', m.y, litT(t, rc / m.c), t);
      }
      const d = nestedConst(lhs, '/', t);
      if (d !== undefined && d.c > 0n && rc > 0n && fitsInt(t, d.c * rc)) return binT('/', d.y, litT(t, d.c * rc), t);
      const k = log2Exact(rc);
      if (k > 0 && isKnownNonNegative(conv(lhs, t))) return binT('>>', conv(lhs, t), makeLiteral(BigInt(k), int32), t);
      return undefined;
    }
    case '%': {
      if ((rc === 1n || (rc === -1n && t.signed)) && isPure(lhs)) return zero();
      if (lc === 0n && isPure(rhs)) return zero();
      if (same) return zero();
      if (rc === undefined || rc === 0n) return undefined;
      const m = nestedConst(lhs, '*', t);
      if (m !== undefined && m.c % rc === 0n && isPure(m.y) && mulNoWrap(m.y, m.c, t)) return zero();
      const n = nestedConst(lhs, '%', t);
      if (n !== undefined && n.c > 0n && rc > 0n && n.c % rc === 0n) return binT('%', n.y, litT(t, rc), t);
      const r = rangeAs(lhs, t);
      const mag = rc < 0n ? -rc : rc;
      if (r.min > -mag && r.max < mag) return conv(lhs, e.type);
      const k = log2Exact(rc);
      if (k > 0 && r.min >= 0n) return binT('&', conv(lhs, t), litT(t, rc - 1n), t);
      return undefined;
    }
    case '<<':
    case '>>': {
      if (rc === 0n) return conv(lhs, e.type);
      if (lc === 0n && isPure(rhs)) return zero();
      if (rc === undefined || rc < 0n || rc >= BigInt(t.bits)) return undefined;
      const s = nestedConst(lhs, op, t);
      if (s === undefined || s.c < 0n) return undefined;
      const total = s.c + rc;
      if (total < BigInt(t.bits)) return binT(op, s.y, makeLiteral(total, int32), t);
      if (!t.signed && isPure(s.y)) return zero();
      if (op === '>>' && t.signed) return binT('>>', s.y, makeLiteral(BigInt(t.bits - 1), int32), t);
      return undefined;
    }
    case '&': {
      if (rc === 0n && isPure(lhs)) return zero();
      if (same) return conv(lhs, e.type);
      if (rc === undefined) return undefined;
      if (rc === allOnes) return conv(lhs, e.type);
      const n = nestedConst(lhs, '&', t);
      if (n !== undefined) return binT('&', n.y, litT(t, n.c & rc), t);
      const r = rangeAs(lhs, t);
      if (r.min >= 0n) {
        const mask = pow2(r.max === 0n ? 0 : r.max.toString(2).length) - 1n;
        if ((rc & mask) === mask) return conv(lhs, e.type);
      }
      return undefined;
    }
    case '|':
    case '^': {
      if (rc === 0n) return conv(lhs, e.type);
      if (same) return op === '|' ? conv(lhs, e.type) : zero();
      if (rc === undefined) return undefined;
      if (op === '|' && rc === allOnes && isPure(lhs)) return conv(litT(t, allOnes), e.type);
      const n = nestedConst(lhs, op, t);
      if (n !== undefined) return binT(op, n.y, litT(t, op === '|' ? n.c | rc : n.c ^ rc), t);
      return undefined;
    }
    default:
      return intComparison(e, t, rc);
  }
}

function intComparison(e: BinaryExpr, t: IntType, rc: bigint | undefined): Expr | undefined {
  const { op, lhs, rhs } = e;
  const pure = isPure(lhs) && isPure(rhs);
  if (pure && exprEquals(lhs, rhs)) return makeLiteral(op === '==' || op === '<=' || op === '>=', bool);
  const a = rangeAs(lhs, t);
  const b = rangeAs(rhs, t);
  let decided: boolean | undefined;
  switch (op as ComparisonOp) {
    case '<':
      decided = a.max < b.min ? true : a.min >= b.max ? false : undefined;
      break;
    case '<=':
      decided = a.max <= b.min ? true : a.min > b.max ? false : undefined;
      break;
    case '>':
      decided = a.min > b.max ? true : a.max <= b.min ? false : undefined;
      break;
    case '>=':
      decided = a.min >= b.max ? true : a.max < b.min ? false : undefined;
      break;
    case '==':
      decided = a.max < b.min || a.min > b.max ? false : a.min === a.max && b.min === b.max ? true : undefined;
      break;
    case '!=':
      decided = a.max < b.min || a.min > b.max ? true : a.min === a.max && b.min === b.max ? false : undefined;
      break;
  }
  if (decided !== undefined && pure) return makeLiteral(decided, bool);
  // x + c1 OP c2 → x OP c2 - c1 (signed: the sum cannot overflow in a defined evaluation)
  if (t.signed && rc !== undefined) {
    const p = linearParts(lhs, t);
    if (p.term !== null && p.c !== 0n && fitsInt(t, rc - p.c)) return simplifyNode(rawT(op, p.term, litT(t, rc - p.c), t));
  }
  return undefined;
}

function floatBinary(e: BinaryExpr): Expr | undefined {
  const { op, lhs, rhs } = e;
  const rv = isLiteral(rhs) && rhs.type.kind !== 'bool' ? Number(rhs.value) : undefined;
  const negZero = rv === 0 && Object.is(rhs.kind === 'literal' ? rhs.value : 0, -0);
  // Exact in IEEE arithmetic for every x, NaN and signed zeros included.
  if ((op === '*' || op === '/') && rv === 1) return conv(lhs, e.type);
  if (op === '+' && rv === 0 && negZero) return conv(lhs, e.type);
  if (op === '-' && rv === 0 && !negZero) return conv(lhs, e.type);
  return undefined;
}

function simplifyBinary(e: BinaryExpr): Expr {
  const { op, lhs, rhs } = e;
  if (op === '&&' || op === '||') return simplifyLogical(e);
  if (isLiteral(lhs) && !isLiteral(rhs)) {
    if (commutative.has(op) && isArithmetic(lhs.type)) return simplifyNode(makeBinary(op, rhs, lhs));
    const swapped = swapRelational[op];
    if (swapped !== undefined && isArithmetic(rhs.type)) return simplifyNode(makeBinary(swapped, rhs, lhs));
  }
  const t = e.type.kind === 'pointer' ? null : operandType(op, lhs, rhs);
  if (t === null) return e;
  const out = t.kind === 'int' ? intBinary(e, t) : floatBinary(e);
  return out ?? e;
}

function simplifyLogical(e: BinaryExpr): Expr {
  const and = e.op === '&&';
  const lc = isLiteral(e.lhs) ? (convertValue(e.lhs.value, bool) as boolean) : undefined;
  const rc = isLiteral(e.rhs) ? (convertValue(e.rhs.value, bool) as boolean) : undefined;
  const absorbing = !and; // false for &&, true for ||
  if (lc !== undefined) return lc === absorbing ? makeLiteral(absorbing, bool) : toBool(e.rhs);
  if (rc !== undefined) {
    if (rc !== absorbing) return toBool(e.lhs);
    if (isPure(e.lhs)) return makeLiteral(absorbing, bool);
  }
  if (isPure(e.lhs) && exprEquals(e.lhs, e.rhs)) return toBool(e.lhs);
  return e;
}

function simplifyUnary(e: UnaryExpr): Expr {
  const x = e.operand;
  if ((e.op === '-' || e.op === '~') && x.kind === 'unary' && x.op === e.op) return conv(x.operand, e.type);
  if (e.op === '!') {
    if (x.kind === 'unary' && x.op === '!' && x.operand.type.kind !== 'pointer') return toBool(x.operand);
    if (x.kind === 'binary') {
      const inv = negateComparison[x.op];
      const ot = operandType(x.op, x.lhs, x.rhs);
      // Not for floats: !(a < b) is true for NaN, a >= b is not.
      if (inv !== undefined && ot !== null && ot.kind === 'int') return simplifyNode(makeBinary(inv, x.lhs, x.rhs));
    }
  }
  if (e.op === '*' && x.kind === 'unary' && x.op === '&') return x.operand;
  if (e.op === '&' && x.kind === 'unary' && x.op === '*') return x.operand;
  return e;
}

function simplifySelect(e: SelectExpr): Expr {
  if (isLiteral(e.cond)) return conv((convertValue(e.cond.value, bool) as boolean) ? e.ifTrue : e.ifFalse, e.type);
  if (isPure(e.cond) && exprEquals(e.ifTrue, e.ifFalse)) return conv(e.ifTrue, e.type);
  if (e.type.kind === 'bool' && isLiteral(e.ifTrue) && isLiteral(e.ifFalse) && e.ifTrue.value !== e.ifFalse.value) {
    return e.ifTrue.value === true ? toBool(e.cond) : simplifyNode(makeUnary('!', e.cond));
  }
  return e;
}

/** Does converting any value of `x` to `u` keep it exactly (so `(T)(U)x == (T)x`)? */
function valuePreserving(x: Expr, u: CType): boolean {
  const from = x.type;
  if (u.kind === 'int' && isIntegral(from)) {
    const r = rangeOf(x);
    return r !== null && r.min >= u.min && r.max <= u.max;
  }
  if (u.kind === 'float' && isIntegral(from)) {
    const r = rangeOf(x);
    const limit = u === float32 ? pow2(24) : pow2(53);
    return r !== null && r.min >= -limit && r.max <= limit;
  }
  if (u === float64 && from === float32) return true;
  return u.kind === 'bool' && from.kind === 'bool';
}

function simplifyCast(e: CastExpr): Expr {
  const x = e.operand;
  if (sameType(x.type, e.type)) return x;
  if (x.kind === 'cast' && isArithmetic(e.type) && isArithmetic(x.type) && valuePreserving(x.operand, x.type)) {
    return conv(x.operand, e.type);
  }
  return e;
}

/** Fold a node whose operands are all literals (skipped when the evaluation is undefined). */
function foldConstant(e: Expr): Expr | undefined {
  if (!isArithmetic(e.type)) return undefined;
  if (e.kind !== 'unary' && e.kind !== 'binary' && e.kind !== 'select' && e.kind !== 'cast') return undefined;
  if (e.kind === 'select' ? !isLiteral(e.cond) || !isLiteral(e.ifTrue) || !isLiteral(e.ifFalse) : !children(e).every(isLiteral)) {
    return undefined;
  }
  try {
    return makeLiteral(evaluate(e), e.type);
  } catch (err) {
    if (err instanceof UndefinedBehaviorError) return undefined;
    throw err;
  }
}

/** A pure integer/bool node whose value range is one point is that constant. */
function foldPoint(e: Expr): Expr {
  if (!isIntegral(e.type) || e.kind === 'literal' || e.kind === 'var' || !isPure(e)) return e;
  if (e.kind !== 'binary' && e.kind !== 'unary' && e.kind !== 'select' && e.kind !== 'cast') return e;
  const r = rangeOf(e);
  if (r === null || r.min !== r.max) return e;
  return e.type.kind === 'bool' ? makeLiteral(r.min !== 0n, bool) : makeLiteral(r.min, e.type);
}

/**
 * Apply the folding rules at the root of `e`, assuming its operands are already simplified. These
 * run on every node the builders (`add`, `mul`, ...) make. What is folded (integers; all rules hold
 * for every evaluation without undefined behaviour):
 *
 * - constants: `c1 op c2` (unless the C++ result is undefined, e.g. `INT_MAX + 1` stays);
 *   constants move to the right of commutative operators and comparisons (`3 < x` → `x > 3`);
 * - identities: `x + 0`, `x - 0`, `x * 1`, `x / 1`, `x << 0`, `x >> 0`, `x | 0`, `x ^ 0`, `x & -1`
 *   → `x`; `x * -1`, `x / -1`, `0 - x` → `-x` (signed); `-(-x)`, `~~x`, `!!x` → `x`;
 * - annihilators (only when the dropped operand is pure): `x * 0`, `0 / x`, `0 % x`, `x % 1`,
 *   `x & 0`, `0 << x`, `x - x`, `x ^ x`, `x % x` → `0`; `x / x` → `1`;
 * - reassociation: `(x ± c1) ± c2` → `x ± c`, `(x + c1) + (y + c2)` → `(x + y) + c` and
 *   `(x + c1) * c2` → `x * c2 + c1 * c2` (signed: only when the new `x + y` / `x * c2` provably cannot
 *   overflow), `(x * c1) * c2` → `x * (c1 c2)`, `(x & c1) & c2`, `(x | c1) | c2`, `(x ^ c1) ^ c2`,
 *   `(x << c1) << c2`, `(x >> c1) >> c2`, `(x / c1) / c2` → `x / (c1 c2)` (c1, c2 > 0),
 *   `(x % c1) % c2` → `x % c2` (c2 | c1);
 * - cancellation: `(x * c1) / c2` → `x * (c1 / c2)` when c2 | c1, `(x * c1) % c2` → `0` when
 *   c2 | c1 (unsigned: only when the product provably does not wrap);
 * - by value range (`rangeOf`): a pure node whose range is one value becomes that literal (e.g.
 *   `x / 8` with x in [0, 7] → `0`, `i < 16` with i in [0, 15] → `true`); `x % c` → `x` when
 *   |x| < |c|; `x & m` → `x` when m covers every bit x can have; and, only for x KNOWN
 *   NON-NEGATIVE, `x / 2^k` → `x >> k` and `x % 2^k` → `x & (2^k - 1)` (for negative x, C++ `/`
 *   truncates toward zero while `>>` floors, so the rewrite is never applied without the proof);
 * - comparisons: `x + c1 < c2` → `x < c2 - c1` (signed only), `!(a < b)` → `a >= b` (integers
 *   only: not for floats, where NaN breaks it), `x == x` → `true` (pure x);
 * - logic and select: `true && x` → `x`, `x || true` → `true` (pure x), `c ? a : a` → `a`,
 *   `true ? a : b` → `a`, `c ? true : false` → `c`;
 * - casts: to the same type → removed; `(T)(U)x` → `(T)x` when U holds every value x can have.
 *
 * Floats fold only constants and the IEEE-exact identities `x * 1`, `x / 1`, `x + (-0.0)`, `x - 0.0`.
 * Postcondition (property-tested): same type, and `evaluate(simplifyNode(e)) === evaluate(e)`
 * whenever the right side is defined.
 */
export function simplifyNode(e: Expr): Expr {
  const folded = foldConstant(e);
  if (folded !== undefined) return folded;
  let out: Expr;
  switch (e.kind) {
    case 'binary':
      out = simplifyBinary(e);
      break;
    case 'unary':
      out = simplifyUnary(e);
      break;
    case 'select':
      out = simplifySelect(e);
      break;
    case 'cast':
      out = simplifyCast(e);
      break;
    default:
      out = e;
  }
  return foldPoint(out);
}

const memo = new WeakMap<Expr, Expr>();

function rebuild(e: Expr, kids: readonly Expr[]): Expr {
  const k = (i: number): Expr => kids[i] as Expr;
  switch (e.kind) {
    case 'unary':
      return makeUnary(e.op, k(0));
    case 'binary':
      return makeBinary(e.op, k(0), k(1));
    case 'select':
      return makeSelect(k(0), k(1), k(2));
    case 'cast':
      return makeCast(k(0), e.type);
    case 'call':
      return makeCall(e.callee, kids, e.type, {
        templateArgs: e.templateArgs,
        pure: e.pure,
        requires: e.requires,
        ...(e.range === null ? {} : { range: e.range }),
      });
    case 'member':
      return makeMember(k(0), e.field, e.type, ...(e.range === null ? [] : [e.range]));
    case 'index':
      return makeIndex(k(0), k(1));
    default:
      return e;
  }
}

/**
 * Simplify a whole tree bottom-up with the rules of `simplifyNode` (trees made by the folding
 * builders are already simplified; this is for trees made with the raw `make*` constructors).
 * Postcondition (property-tested over random int32/uint32/int64 trees): `simplify(e).type` equals
 * `e.type`, and `evaluate(simplify(e), env) === evaluate(e, env)` for every `env` under which the
 * right side is defined (no undefined behaviour) — the left side is then defined too.
 */
export function simplify(e: Expr): Expr {
  const hit = memo.get(e);
  if (hit !== undefined) return hit;
  const kids = children(e);
  const next = kids.map(simplify);
  const node = next.every((n, i) => n === kids[i]) ? e : rebuild(e, next);
  const out = simplifyNode(node);
  memo.set(e, out);
  return out;
}
