import {
  add,
  and,
  bitAnd,
  bitXor,
  cast,
  div,
  ge,
  int32,
  int64,
  isExpr,
  lit,
  lt,
  mod,
  mul,
  select,
  shl,
  shr,
  sub,
  uint32,
  uint64,
  variable,
  type BlockBuilder,
  type Expr,
  type IntType,
} from '@tilekit/codegen';
import { InvalidParameterError, SymbolicArithmeticError } from '../errors.ts';
import { MAGIC_DIVISION_MAX_DIVIDEND, MAGIC_DIVISION_MAX_DIVISOR } from '../magicDivision.ts';
import { atomInterval, intervalOf, type Interval } from '../symbolic/bounds.ts';
import { formatSymInt, fromAtom, keyOf, type Atom, type SymInt } from '../symbolic/expr.ts';
import { add as symAdd, mul as symMul, neg as symNeg } from '../symbolic/poly.ts';
import { floorDivAtom, proveNonNegative } from '../symbolic/simplify.ts';
import { indexVar } from '../symbolic/symbol.ts';

/** Where the magic numbers of a runtime divisor come from (see `IndexEmitterOptions.magic`). */
export type MagicSource = 'compute' | ((divisor: SymInt) => { readonly multiplier: Expr; readonly shift: Expr });

/** Options of emission. */
export interface IndexEmitterOptions {
  /**
   * The C++ expressions of the kernel symbols, by name (typically the kernel's `int` parameters).
   * A symbol without an entry is referenced as a variable of its own name, typed by its domain.
   */
  readonly symbols?: Readonly<Record<string, Expr>>;
  /**
   * Magic numbers for division by runtime lengths: `'compute'` (default) emits their computation
   * once per divisor into the emitter's prologue block; a function supplies them instead (e.g. kernel
   * arguments the host computed with `magicNumbers`).
   */
  readonly magic?: MagicSource;
  /** Use magic-number division for runtime divisors where it is exact (default true); false emits `/`. */
  readonly magicDivision?: boolean;
}

const INT32: Interval = { lo: -(2 ** 31), hi: 2 ** 31 - 1 };
const INT64_MAX = 2 ** 63;

/** int32 when every value in the interval fits, else int64 (a typed error beyond 64 bits). */
export function indexTypeFor(i: Interval, what = 'index expression'): IntType {
  if (i.lo >= INT32.lo && i.hi <= INT32.hi) return int32;
  if (i.lo >= -INT64_MAX && i.hi < INT64_MAX) return int64;
  throw new SymbolicArithmeticError(
    'layout/integer-overflow',
    `${what}: values in [${i.lo}, ${i.hi}] do not fit in 64 bits (declare tighter symbol domains, e.g. symbol('seqlen', { max: 1 << 20 }))`,
  );
}

/** max |v| over an interval. */
const maxAbs = (i: Interval): number => Math.max(Math.abs(i.lo), Math.abs(i.hi));

/**
 * A bound on |every partial sum and product| of the canonical form of x, in any evaluation order:
 * |c| + Σ |coef|·Π max|atom|. The emitted type of x is int32 when this bound fits, else int64.
 */
export function magnitudeBound(x: SymInt): number {
  if (typeof x === 'number') return Math.abs(x);
  let total = Math.abs(x.constant);
  for (const t of x.terms) {
    let p = Math.abs(t.coef);
    for (const a of t.atoms) p *= Math.max(1, maxAbs(atomInterval(a, 'honest')));
    total += p;
  }
  return total;
}

/** Memo of emitted div/mod/xor temps, valid for one straight-line region (no index variable changes inside it). */
export type TempMemo = Map<string, Expr>;

/**
 * Turns SymInts into typed codegen expressions. Index variables registered with `indexVariable`
 * map to the C++ expressions given; kernel symbols map per `options.symbols`. Division, modulo and
 * xor atoms become `const` temporaries (one per atom and memo), typed by their honest interval.
 *
 * Emission rules (all exact under floor semantics, checked against the TS evaluator):
 * - a sum/product is emitted in `int` when `magnitudeBound` fits 32 bits, else in `long long`;
 * - ⌊n / 2^k⌋ → `n >> k`, n mod 2^k → `n & (2^k − 1)` (floor semantics for negative n too);
 * - ⌊n / c⌋ for another constant → `n / c` when n ≥ 0, else a floor-corrected quotient;
 * - ⌊n / d⌋ for a runtime d → magic-number division when 0 ≤ n ≤ 2^31 − 1 and 1 ≤ d ≤ 2^31 − 1
 *   (its exact range), else `/` (floor-corrected when n may be negative);
 * - n mod d → n − ⌊n / d⌋·d, reusing the quotient.
 */
export class IndexEmitter {
  /** Where hoisted, loop-invariant code (magic numbers) goes. */
  readonly prologue: BlockBuilder;
  private readonly symbolExprs: ReadonlyMap<string, Expr>;
  private readonly indexExprs = new Map<string, Expr>();
  private readonly magicMemo = new Map<string, { multiplier: Expr; shift: Expr }>();
  private readonly prologueMemo: TempMemo = new Map();
  private readonly magicSource: MagicSource;
  private readonly useMagic: boolean;
  private counter = 0;

  constructor(prologue: BlockBuilder, options: IndexEmitterOptions = {}) {
    this.prologue = prologue;
    this.symbolExprs = new Map(Object.entries(options.symbols ?? {}));
    this.magicSource = options.magic ?? 'compute';
    this.useMagic = options.magicDivision ?? true;
  }

  /**
   * Registers a C++ index expression as a fresh index variable with honest range [min, max] (and,
   * when given, the assumed extent [0, extent)); returns its SymInt. Integer literals fold to their
   * value; non-variable expressions are first stored in a `const` local of `b`.
   */
  indexVariable(
    b: BlockBuilder,
    expr: Expr,
    range: { readonly min: number; readonly max: number; readonly extent?: SymInt },
    hint: string,
  ): SymInt {
    if (expr.kind === 'literal' && typeof expr.value === 'bigint') return Number(expr.value);
    const type = indexTypeFor({ lo: range.min, hi: range.max }, hint);
    let e = expr;
    if (e.kind !== 'var') e = b.let(hint, type, castTo(e, type));
    const name = `ix${this.counter++}`;
    this.indexExprs.set(name, e);
    return indexVar(name, range);
  }

  /** Registers an existing C++ expression as the value of a fresh index variable (for coordinates). */
  bindVariable(expr: Expr, range: { readonly min: number; readonly max: number; readonly extent?: SymInt }): SymInt {
    const v = this.declareVariable(range);
    this.defineVariable(v.name, expr);
    return v.value;
  }

  /** A fresh index variable whose C++ expression is given later with `defineVariable` (before it is emitted). */
  declareVariable(range: { readonly min: number; readonly max: number; readonly extent?: SymInt }): {
    readonly name: string;
    readonly value: SymInt;
  } {
    const name = `ix${this.counter++}`;
    return { name, value: indexVar(name, range) };
  }

  /** Supplies the C++ expression of a variable from `declareVariable`. */
  defineVariable(name: string, expr: Expr): void {
    this.indexExprs.set(name, expr);
  }

  /** The C++ expression of `x`, with temps declared in `b` (memoized in `memo`). */
  emit(b: BlockBuilder, x: SymInt, memo: TempMemo): Expr {
    if (typeof x === 'number') return literal(x);
    const T = indexTypeFor({ lo: -magnitudeBound(x), hi: magnitudeBound(x) }, formatSymInt(x));
    const positive: Expr[] = [];
    const negative: Expr[] = [];
    for (const t of x.terms) {
      let p: Expr | undefined;
      for (const a of t.atoms) {
        const e = castTo(this.atom(b, a, memo), T);
        p = p === undefined ? e : mul(p, e);
      }
      const mag = Math.abs(t.coef);
      if (mag !== 1) p = mul(p!, lit(mag, T));
      (t.coef < 0 ? negative : positive).push(p!);
    }
    let out: Expr;
    if (positive.length > 0) {
      out = positive.reduce((acc, e) => add(acc, e));
      for (const e of negative) out = sub(out, e);
      if (x.constant !== 0) out = add(out, lit(x.constant, T));
    } else {
      out = lit(x.constant, T);
      for (const e of negative) out = sub(out, e);
    }
    return castTo(out, T);
  }

  /**
   * A condition `x ≥ 0` as a bool expression, written `index part >= constant part` (or `<` when
   * the index part is negated); folds to `true` when provable for every in-range top index.
   */
  nonNegative(b: BlockBuilder, x: SymInt, memo: TempMemo): Expr {
    if (proveNonNegative(x)) return lit(true);
    if (typeof x === 'number') return lit(x >= 0);
    const varTerms = x.terms.filter((t) => t.atoms.some((a) => a.kind !== 'symbol'));
    const indexPart = symAdd(...varTerms.map((t) => termValue(t.coef, t.atoms)));
    const rest = symAdd(x, symNeg(indexPart)); // x = indexPart + rest
    if (varTerms.length > 0 && varTerms.every((t) => t.coef < 0)) {
      // −I ≤ rest  ⇔  −I < rest + 1
      return lt(this.emit(b, symNeg(indexPart), memo), this.emit(b, symAdd(rest, 1), memo));
    }
    return ge(this.emit(b, indexPart, memo), this.emit(b, symNeg(rest), memo));
  }

  /** AND of `nonNegative` over conditions. */
  allNonNegative(b: BlockBuilder, conditions: readonly SymInt[], memo: TempMemo): Expr {
    let out: Expr = lit(true);
    for (const c of conditions) out = and(out, this.nonNegative(b, c, memo));
    return out;
  }

  private atom(b: BlockBuilder, a: Atom, memo: TempMemo): Expr {
    switch (a.kind) {
      case 'symbol': {
        const given = this.symbolExprs.get(a.name);
        if (given !== undefined) return given;
        return variable(a.name, indexTypeFor({ lo: a.min, hi: a.max }, `symbol ${a.name}`), { range: [a.min, a.max] });
      }
      case 'var': {
        const e = this.indexExprs.get(a.name);
        if (e === undefined) throw new InvalidParameterError('emit', 'index variables must be registered with the emitter', a.name);
        return e;
      }
      default: {
        const hit = memo.get(a.key);
        if (hit !== undefined) return hit;
        const e = this.temp(b, a, memo);
        memo.set(a.key, e);
        return e;
      }
    }
  }

  private temp(b: BlockBuilder, a: Atom, memo: TempMemo): Expr {
    const type = indexTypeFor(atomInterval(a, 'honest'));
    switch (a.kind) {
      case 'floorDiv':
        return b.let('q', type, castTo(this.floorDiv(b, a.num, a.den, memo), type));
      case 'mod': {
        if (typeof a.den === 'number' && isPow2(a.den)) {
          const n = this.emit(b, a.num, memo);
          return b.let('r', type, castTo(bitAnd(n, lit(a.den - 1, n.type as IntType)), type));
        }
        const n = this.emit(b, a.num, memo);
        const nt = n.type as IntType;
        const q = this.atom(b, floorDivAtom(a.num, a.den), memo);
        const d = castTo(this.emit(b, a.den, memo), nt);
        return b.let('r', type, castTo(sub(n, mul(castTo(q, nt), d)), type));
      }
      case 'xor': {
        const T = widest(type, this.emit(b, a.a, memo).type as IntType);
        return b.let('x', type, castTo(bitXor(castTo(this.emit(b, a.a, memo), T), castTo(this.emit(b, a.b, memo), T)), type));
      }
      default:
        throw new InvalidParameterError('emit', 'not a temporary atom', a.kind);
    }
  }

  private floorDiv(b: BlockBuilder, num: SymInt, den: SymInt, memo: TempMemo): Expr {
    const n = this.emit(b, num, memo);
    const nt = n.type as IntType;
    const ni = intervalOf(num);
    if (typeof den === 'number') {
      if (isPow2(den)) return shr(n, lit(Math.log2(den), int32));
      const d = lit(den, nt);
      return ni.lo >= 0 ? div(n, d) : floorCorrected(n, d);
    }
    const di = intervalOf(den);
    if (this.useMagic && ni.lo >= 0 && ni.hi <= MAGIC_DIVISION_MAX_DIVIDEND && di.lo >= 1 && di.hi <= MAGIC_DIVISION_MAX_DIVISOR) {
      const { multiplier, shift } = this.magicNumbers(den);
      const nu = castTo(n, uint32);
      const high = cast(shr(mul(cast(nu, uint64), cast(multiplier, uint64)), lit(32, int32)), uint32);
      return cast(shr(add(high, nu), shift), int32);
    }
    const d = castTo(this.emit(b, den, memo), nt);
    return ni.lo >= 0 ? div(n, d) : floorCorrected(n, d);
  }

  /** The magic numbers of a runtime divisor (memoized per divisor). */
  magicNumbers(den: SymInt): { multiplier: Expr; shift: Expr } {
    const key = keyOf(den);
    const hit = this.magicMemo.get(key);
    if (hit !== undefined) return hit;
    let out: { multiplier: Expr; shift: Expr };
    if (this.magicSource !== 'compute') out = this.magicSource(den);
    else {
      // s = bit length of d − 1 (a branch-free binary search), m = ⌊2^32·(2^s − d) / d⌋ + 1.
      const p = this.prologue;
      const d = p.let('magic_d', uint32, castTo(this.emit(p, den, this.prologueMemo), uint32));
      let x: Expr = p.let('magic_x', uint32, sub(d, lit(1, uint32)));
      const parts: Expr[] = [];
      for (const k of [16, 8, 4, 2, 1]) {
        const s = p.let('magic_s', uint32, select(ge(x, lit(2 ** k, uint32)), lit(k, uint32), lit(0, uint32)));
        x = p.let('magic_x', uint32, shr(x, s));
        parts.push(s);
      }
      const shift = p.let(
        'magic_shift',
        uint32,
        parts.reduce((acc, s) => add(acc, s), x),
      );
      const d64 = cast(d, uint64);
      const m = add(div(mul(lit(2 ** 32, uint64), sub(shl(lit(1, uint64), shift), d64)), d64), lit(1, uint64));
      const multiplier = p.let('magic_multiplier', uint32, cast(m, uint32));
      out = { multiplier, shift };
    }
    this.magicMemo.set(key, out);
    return out;
  }
}

function termValue(coef: number, atoms: readonly Atom[]): SymInt {
  return symMul(coef, ...atoms.map(fromAtom));
}

function isPow2(x: number): boolean {
  return x >= 1 && Number.isSafeInteger(x) && (x <= 2 ** 30 ? (x & (x - 1)) === 0 : Number.isInteger(Math.log2(x)));
}

function widest(a: IntType, b: IntType): IntType {
  return a.bits >= b.bits ? a : b;
}

function literal(x: number): Expr {
  return lit(x, indexTypeFor({ lo: x, hi: x }));
}

/** `e` converted to `t` (no cast when it already has that type). */
export function castTo(e: Expr, t: IntType): Expr {
  if (!isExpr(e)) return e;
  return e.type.kind === 'int' && e.type.name === t.name ? e : cast(e, t);
}

/** ⌊n / d⌋ for d > 0 and n of either sign: C++'s truncating quotient, minus one when the remainder is negative. */
function floorCorrected(n: Expr, d: Expr): Expr {
  return select(lt(mod(n, d), lit(0, n.type as IntType)), sub(div(n, d), lit(1, n.type as IntType)), div(n, d));
}
