import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { int32, isArithmetic, isIntegral, sameType } from './cType.ts';
import type { CType, IntType } from './cType.ts';
import { makeVar } from './expr.ts';
import type { Expr, IntRange, VarExpr } from './expr.ts';
import { NameScope } from './nameScope.ts';
import { cast, lit, lt, toExpr, toRange } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { rangeOf } from './range.ts';
import { assignStmt, blockStmt, commentStmt, convertForStore, declStmt, exprStmt, preprocessorStmt, verbatimStmt } from './stmt.ts';
import type { AssignOp, BlockStmt, IfStmt, Stmt, Storage, Unroll } from './stmt.ts';

/** What a block knows about where it sits. */
export interface BlockContext {
  /** The enclosing function's return type (`null`: not in a function; `return` is unchecked). */
  readonly returnType: CType | null;
}

/** A range as `{ min, max }` or `[min, max]`. */
export type RangeLike = IntRange | readonly [number | bigint, number | bigint];

/** Options of `declare`. */
export interface DeclareOptions {
  /** `const` (default for `let`), `mutable` (`var`) or `constexpr`. */
  readonly storage?: Storage;
  /** Printed before the type: `static`, `__shared__`, `alignas(16)`. */
  readonly qualifiers?: readonly string[];
  /**
   * Known range of the variable's integer value. Defaults, for a `const`/`constexpr` integer, to the
   * initializer's `rangeOf` (a const equals its initializer), so later folds can use it.
   */
  readonly range?: RangeLike;
}

/** A counted loop `for (T i = from; i < to; i += step)`. */
export interface ForRangeSpec {
  /** Base name of the induction variable (made unique), default `i`. */
  readonly name?: string;
  /** Its type (default `int`). */
  readonly type?: IntType;
  /** First value (default 0). */
  readonly from?: ExprLike;
  /** Exclusive bound (converted to `type` when it is an expression of another type). */
  readonly to: ExprLike;
  /** A positive integer step (default 1). */
  readonly step?: number | bigint;
  /** Unroll hint (default none). */
  readonly unroll?: Unroll;
}

function toTyped(x: ExprLike, type: CType): Expr {
  if (typeof x === 'object') return x;
  if (!isArithmetic(type)) throw new CodegenTypeError('initializer', `a JS value cannot initialize ${type.kind} type`);
  return lit(x, type);
}

/**
 * Builds a block of statements in order. Every declared local gets a unique name from the block's
 * `NameScope` and comes back as a `VarExpr` to use in later expressions:
 *
 * ```ts
 * const i = b.let('i', int32, add(x, mul(y, 4)));   // const int i = x + y * 4;
 * b.if(lt(i, n), (t) => t.assign(out, i));
 * ```
 *
 * Postconditions: names never collide with keywords, builtins or names visible in enclosing scopes;
 * statements appear in call order; a branch on a literal condition emits only the taken side.
 */
export class BlockBuilder {
  readonly scope: NameScope;
  readonly context: BlockContext;
  readonly #stmts: Stmt[] = [];

  constructor(scope: NameScope = new NameScope(), context: BlockContext = { returnType: null }) {
    this.scope = scope;
    this.context = context;
  }

  /** The statements so far. */
  get statements(): readonly Stmt[] {
    return this.#stmts;
  }

  /** The block built so far. */
  build(): BlockStmt {
    return blockStmt(this.#stmts);
  }

  /** Append ready-made statements. */
  push(...stmts: Stmt[]): this {
    this.#stmts.push(...stmts);
    return this;
  }

  /** A builder for a nested block (child scope, same context). */
  nested(): BlockBuilder {
    return new BlockBuilder(this.scope.child(), this.context);
  }

  /** Declare a local (see `DeclareOptions`); returns a reference to it under its unique name. */
  declare(name: string, type: CType, init: ExprLike | null = null, options: DeclareOptions = {}): VarExpr {
    const unique = this.scope.fresh(name);
    const decl = declStmt(unique, type, init === null ? null : toTyped(init, type), {
      ...(options.storage === undefined ? {} : { storage: options.storage }),
      ...(options.qualifiers === undefined ? {} : { qualifiers: options.qualifiers }),
    });
    this.#stmts.push(decl);
    let range: IntRange | null = options.range === undefined ? null : toRange(options.range);
    if (range === null && decl.storage !== 'mutable' && decl.init !== null && isIntegral(type)) range = rangeOf(decl.init);
    return makeVar(unique, type, range);
  }

  /** `const T name = init;` */
  let(name: string, type: CType, init: ExprLike, options: Omit<DeclareOptions, 'storage'> = {}): VarExpr {
    return this.declare(name, type, init, { ...options, storage: 'const' });
  }

  /** `T name [= init];` (mutable). */
  var(name: string, type: CType, init: ExprLike | null = null, options: Omit<DeclareOptions, 'storage'> = {}): VarExpr {
    return this.declare(name, type, init, { ...options, storage: 'mutable' });
  }

  /** `constexpr T name = init;` */
  constexpr(name: string, type: CType, init: ExprLike, options: Omit<DeclareOptions, 'storage'> = {}): VarExpr {
    return this.declare(name, type, init, { ...options, storage: 'constexpr' });
  }

  /** `target op value;` (`=` converts the value to the target's type). */
  assign(target: Expr, value: ExprLike, op: AssignOp = '='): this {
    this.#stmts.push(assignStmt(target, op === '=' ? toTyped(value, target.type) : toExpr(value, target), op));
    return this;
  }

  /** `expr;` */
  expr(e: Expr): this {
    this.#stmts.push(exprStmt(e));
    return this;
  }

  #sub(body: (b: BlockBuilder) => void): BlockStmt {
    const b = this.nested();
    body(b);
    return b.build();
  }

  /**
   * `if (cond) { then } [else { otherwise }]`. A literal condition (e.g. a bounds check the
   * simplifier decided) emits only the taken branch's statements, inline in this block.
   */
  if(cond: ExprLike, then: (b: BlockBuilder) => void, otherwise?: (b: BlockBuilder) => void): this {
    const c = toExpr(cond);
    if (c.kind === 'literal') {
      const taken = c.value !== false && c.value !== 0n && c.value !== 0 ? then : otherwise;
      taken?.(this);
      return this;
    }
    const thenBlock = this.#sub(then);
    let elseBlock: BlockStmt | IfStmt | null = null;
    if (otherwise !== undefined) {
      const e = this.#sub(otherwise);
      // `else { if (...) {...} }` prints as `else if`.
      elseBlock = e.body.length === 1 && e.body[0]?.kind === 'if' ? e.body[0] : e;
    }
    this.#stmts.push(Object.freeze({ kind: 'if', cond: c, then: thenBlock, else: elseBlock }));
    return this;
  }

  /**
   * A counted loop `for (T i = from; i < to; i += step)`. The induction variable carries the range
   * [min(from), max(to) - 1], so index arithmetic on it folds (e.g. `i / 8` with `to = 8` → `0`).
   * A loop that provably never runs (from ≥ to as constants) emits nothing.
   */
  forRange(spec: ForRangeSpec, body: (b: BlockBuilder, i: VarExpr) => void): this {
    const type = spec.type ?? int32;
    const step = BigInt(spec.step ?? 1);
    if (step <= 0n) throw new ArgumentError('step', 'must be a positive integer', spec.step);
    const from = toTyped(spec.from ?? 0, type);
    const rawTo = toTyped(spec.to, type);
    const to = sameType(rawTo.type, type) ? rawTo : cast(rawTo, type);
    const fr = rangeOf(convertForStore(from, type, 'from'));
    const tr = rangeOf(to);
    const lo = fr === null ? type.min : fr.min;
    const hi = tr === null ? type.max - 1n : tr.max - 1n;
    if (lo > hi) return this;
    const scope = this.scope.child();
    const name = scope.fresh(spec.name ?? 'i');
    const init = declStmt(name, type, from);
    const i = makeVar(name, type, { min: lo, max: hi });
    const loopVar = makeVar(name, type);
    const inner = new BlockBuilder(scope.child(), this.context);
    body(inner, i);
    this.#stmts.push(
      Object.freeze({
        kind: 'for',
        init,
        cond: lt(loopVar, to),
        step: assignStmt(loopVar, lit(step, type), '+='),
        body: inner.build(),
        unroll: spec.unroll ?? null,
      }),
    );
    return this;
  }

  /** A general `for (init; cond; step)` loop; `init` is declared in the loop's own scope. */
  for(
    init: { readonly name: string; readonly type: CType; readonly value: ExprLike } | null,
    cond: (v: VarExpr | null) => Expr | null,
    step: (v: VarExpr | null) => Stmt | null,
    body: (b: BlockBuilder, v: VarExpr | null) => void,
    unroll: Unroll = null,
  ): this {
    const scope = this.scope.child();
    let v: VarExpr | null = null;
    let initStmt = null;
    if (init !== null) {
      const name = scope.fresh(init.name);
      initStmt = declStmt(name, init.type, toTyped(init.value, init.type));
      v = makeVar(name, init.type);
    }
    const s = step(v);
    if (s !== null && s.kind !== 'assign' && s.kind !== 'expr')
      throw new ArgumentError('step', 'must be an assignment or expression statement', s.kind);
    const inner = new BlockBuilder(scope.child(), this.context);
    body(inner, v);
    this.#stmts.push(Object.freeze({ kind: 'for', init: initStmt, cond: cond(v), step: s, body: inner.build(), unroll }));
    return this;
  }

  /** `while (cond) { body }` */
  while(cond: ExprLike, body: (b: BlockBuilder) => void): this {
    this.#stmts.push(Object.freeze({ kind: 'while', cond: toExpr(cond), body: this.#sub(body) }));
    return this;
  }

  /** `{ body }` in a nested scope. */
  block(body: (b: BlockBuilder) => void): this {
    this.#stmts.push(this.#sub(body));
    return this;
  }

  /** `return [value];` (the value is converted to the function's return type). */
  return(value?: ExprLike): this {
    const rt = this.context.returnType;
    if (value === undefined) {
      if (rt !== null && rt.kind !== 'void') throw new CodegenTypeError('return', `a function returning ${rt.kind} must return a value`);
      this.#stmts.push(Object.freeze({ kind: 'return', value: null }));
      return this;
    }
    if (rt !== null && rt.kind === 'void') throw new CodegenTypeError('return', 'a void function cannot return a value');
    const e = rt === null ? toExpr(value) : convertForStore(toTyped(value, rt), rt, 'returned value');
    this.#stmts.push(Object.freeze({ kind: 'return', value: e }));
    return this;
  }

  /** `break;` */
  break(): this {
    this.#stmts.push(Object.freeze({ kind: 'break' }));
    return this;
  }

  /** `continue;` */
  continue(): this {
    this.#stmts.push(Object.freeze({ kind: 'continue' }));
    return this;
  }

  /** `// text` */
  comment(text: string): this {
    this.#stmts.push(commentStmt(text));
    return this;
  }

  /** `#pragma text` */
  pragma(text: string): this {
    this.#stmts.push(preprocessorStmt(`#pragma ${text}`));
    return this;
  }

  /** A preprocessor line (`#if ...`). */
  preprocessor(line: string): this {
    this.#stmts.push(preprocessorStmt(line));
    return this;
  }

  /** Verbatim lines (leaf primitives only, e.g. inline asm). */
  verbatim(lines: string | readonly string[]): this {
    this.#stmts.push(verbatimStmt(lines));
    return this;
  }
}
