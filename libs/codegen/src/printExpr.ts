import { doubleLiteralText, floatLiteralText } from './floatLiteral.ts';
import { float32, typeToString } from './cType.ts';
import type { BinaryOp, Expr, LiteralExpr } from './expr.ts';

/**
 * C++ operator precedence, higher binds tighter (cppreference "C++ Operator Precedence"; levels we do
 * not emit are skipped): postfix 17, unary and casts 16, multiplicative 13, additive 12, shift 11,
 * relational 9, equality 8, & 7, ^ 6, | 5, && 4, || 3, ?: 2.
 */
export const precedence = {
  postfix: 17,
  unary: 16,
  multiplicative: 13,
  additive: 12,
  shift: 11,
  relational: 9,
  equality: 8,
  bitAnd: 7,
  bitXor: 6,
  bitOr: 5,
  logicalAnd: 4,
  logicalOr: 3,
  conditional: 2,
} as const;

/** The precedence level of a binary operator. */
export function binaryPrecedence(op: BinaryOp): number {
  switch (op) {
    case '*':
    case '/':
    case '%':
      return precedence.multiplicative;
    case '+':
    case '-':
      return precedence.additive;
    case '<<':
    case '>>':
      return precedence.shift;
    case '<':
    case '<=':
    case '>':
    case '>=':
      return precedence.relational;
    case '==':
    case '!=':
      return precedence.equality;
    case '&':
      return precedence.bitAnd;
    case '^':
      return precedence.bitXor;
    case '|':
      return precedence.bitOr;
    case '&&':
      return precedence.logicalAnd;
    case '||':
      return precedence.logicalOr;
  }
}

interface Printed {
  readonly text: string;
  readonly prec: number;
}

const isComparison = (op: BinaryOp): boolean => ['==', '!=', '<', '<=', '>', '>='].includes(op);
const isBitwise = (op: BinaryOp): boolean => op === '&' || op === '|' || op === '^';
const isShift = (op: BinaryOp): boolean => op === '<<' || op === '>>';

/**
 * Literal text. Integers carry the suffix of their type: int `5`, unsigned `5u`, long long `5ll`,
 * unsigned long long `5ull` (unsigned values ≥ 2^16 in hex: `0xffffffffu`); narrower types (no
 * suffix exists) print `static_cast<short>(5)`. The
 * most negative int/long long prints `(-2147483647 - 1)` because `-2147483648` would be the negation
 * of a `long` literal. Floats print the shortest exact decimal (`0.1f`, `1.0`).
 */
export function literalText(e: LiteralExpr): Printed {
  const t = e.type;
  if (t.kind === 'bool') return { text: e.value ? 'true' : 'false', prec: precedence.postfix };
  if (t.kind === 'float') {
    const text = t === float32 ? floatLiteralText(e.value as number) : doubleLiteralText(e.value as number);
    return { text, prec: text.startsWith('-') ? precedence.unary : precedence.postfix };
  }
  const v = e.value as bigint;
  if (t.bits < 32) return { text: `static_cast<${t.cpp}>(${v})`, prec: precedence.postfix };
  const suffix = t.bits === 32 ? (t.signed ? '' : 'u') : t.signed ? 'll' : 'ull';
  if (t.signed && v === t.min) return { text: `(${v + 1n}${suffix} - 1)`, prec: precedence.postfix };
  // Large unsigned values are almost always masks or bit patterns: hex reads better.
  if (!t.signed && v >= 0x10000n) return { text: `0x${v.toString(16)}${suffix}`, prec: precedence.postfix };
  return { text: `${v}${suffix}`, prec: v < 0n ? precedence.unary : precedence.postfix };
}

function wrap(p: Printed, parens: boolean): string {
  return parens ? `(${p.text})` : p.text;
}

/**
 * Extra parentheses that precedence does not need but readers (and g++ -Wparentheses) want: any
 * binary operand of a shift, a different operator inside & | ^, && inside ||, and a comparison
 * inside a comparison.
 */
function clarityParens(parent: BinaryOp, child: Expr): boolean {
  if (child.kind !== 'binary') return false;
  if (isShift(parent)) return true;
  if (isBitwise(parent)) return child.op !== parent;
  if (parent === '||') return child.op === '&&';
  if (isComparison(parent)) return isComparison(child.op);
  return false;
}

function print(e: Expr): Printed {
  switch (e.kind) {
    case 'literal':
      return literalText(e);
    case 'var':
      return { text: e.name, prec: precedence.postfix };
    case 'verbatim':
      return { text: e.text, prec: precedence.postfix };
    case 'unary': {
      const inner = print(e.operand);
      const clash = (e.op === '-' || e.op === '&') && inner.text.startsWith(e.op);
      return { text: `${e.op}${wrap(inner, inner.prec < precedence.unary || clash)}`, prec: precedence.unary };
    }
    case 'binary': {
      const p = binaryPrecedence(e.op);
      const l = print(e.lhs);
      const r = print(e.rhs);
      const lp = l.prec < p || clarityParens(e.op, e.lhs);
      const rp = r.prec <= p || clarityParens(e.op, e.rhs);
      return { text: `${wrap(l, lp)} ${e.op} ${wrap(r, rp)}`, prec: p };
    }
    case 'select': {
      const c = print(e.cond);
      const a = print(e.ifTrue);
      const b = print(e.ifFalse);
      const text = `${wrap(c, c.prec <= precedence.conditional)} ? ${wrap(a, a.prec <= precedence.conditional)} : ${wrap(b, b.prec <= precedence.conditional)}`;
      return { text, prec: precedence.conditional };
    }
    case 'cast': {
      const kind = e.type.kind === 'pointer' && e.operand.type.kind === 'pointer' ? 'reinterpret_cast' : 'static_cast';
      return { text: `${kind}<${typeToString(e.type)}>(${print(e.operand).text})`, prec: precedence.postfix };
    }
    case 'call': {
      const targs = e.templateArgs.length > 0 ? `<${e.templateArgs.join(', ')}>` : '';
      return { text: `${e.callee}${targs}(${e.args.map((a) => print(a).text).join(', ')})`, prec: precedence.postfix };
    }
    case 'member': {
      const o = print(e.object);
      return { text: `${wrap(o, o.prec < precedence.postfix)}${e.arrow ? '->' : '.'}${e.field}`, prec: precedence.postfix };
    }
    case 'index': {
      const b = print(e.base);
      return { text: `${wrap(b, b.prec < precedence.postfix)}[${print(e.index).text}]`, prec: precedence.postfix };
    }
  }
}

/**
 * The C++ text of an expression with the fewest parentheses precedence and associativity need (all
 * binary operators are left-associative, so a right operand of equal precedence is parenthesized),
 * plus the clarity parentheses of `clarityParens`. Postcondition (checked by compiling with g++ and
 * comparing with `evaluate`): the text parses back to the same tree.
 */
export function printExpr(e: Expr): string {
  return print(e).text;
}
