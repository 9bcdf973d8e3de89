import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { isArithmetic, sameType, typeToString } from './cType.ts';
import type { CType } from './cType.ts';
import { isLvalue, isIdentifier, makeCast } from './expr.ts';
import type { Expr } from './expr.ts';
import { simplifyNode } from './simplify.ts';

/** How a declared variable may change: `const`, plain mutable, or `constexpr`. */
export type Storage = 'const' | 'mutable' | 'constexpr';

/** `[qualifiers] [const|constexpr] T name [= init];` (arrays: `T name[n]`). */
export interface DeclStmt {
  readonly kind: 'decl';
  readonly name: string;
  readonly type: CType;
  readonly init: Expr | null;
  readonly storage: Storage;
  /** Printed first, in order: `static`, `__shared__`, `alignas(16)`, ... */
  readonly qualifiers: readonly string[];
}

/** Assignment operators. */
export type AssignOp = '=' | '+=' | '-=' | '*=' | '/=' | '%=' | '<<=' | '>>=' | '&=' | '|=' | '^=';

/** `target op value;` */
export interface AssignStmt {
  readonly kind: 'assign';
  readonly target: Expr;
  readonly op: AssignOp;
  readonly value: Expr;
}

/** `expr;` (a call made for its effect). */
export interface ExprStmt {
  readonly kind: 'expr';
  readonly expr: Expr;
}

/** `if (cond) { ... } else ...` */
export interface IfStmt {
  readonly kind: 'if';
  readonly cond: Expr;
  readonly then: BlockStmt;
  readonly else: BlockStmt | IfStmt | null;
}

/**
 * Unrolling hint of a loop: `true` = unroll fully (`#pragma unroll`), a count = `#pragma unroll n`,
 * `false` = never (`#pragma unroll 1`), `null` = no pragma. Targets spell it (g++: `#pragma GCC
 * unroll n`, nothing for `true`).
 */
export type Unroll = boolean | number | null;

/** `for (init; cond; step) { ... }` */
export interface ForStmt {
  readonly kind: 'for';
  readonly init: DeclStmt | AssignStmt | null;
  readonly cond: Expr | null;
  readonly step: AssignStmt | ExprStmt | null;
  readonly body: BlockStmt;
  readonly unroll: Unroll;
}

/** `while (cond) { ... }` */
export interface WhileStmt {
  readonly kind: 'while';
  readonly cond: Expr;
  readonly body: BlockStmt;
}

/** `return [value];` */
export interface ReturnStmt {
  readonly kind: 'return';
  readonly value: Expr | null;
}

/** `break;` / `continue;` */
export interface JumpStmt {
  readonly kind: 'break' | 'continue';
}

/** `// text` (one line per line of text). */
export interface CommentStmt {
  readonly kind: 'comment';
  readonly text: string;
}

/** A preprocessor line such as `#pragma unroll` or `#if __CUDA_ARCH__ >= 900` (printed as given). */
export interface PreprocessorStmt {
  readonly kind: 'preprocessor';
  readonly text: string;
}

/** `{ ... }` */
export interface BlockStmt {
  readonly kind: 'block';
  readonly body: readonly Stmt[];
}

/** Lines emitted as is at the current indentation: the escape hatch for leaf primitives (inline asm). */
export interface VerbatimStmt {
  readonly kind: 'verbatim';
  readonly lines: readonly string[];
}

/** Every statement. */
export type Stmt =
  | DeclStmt
  | AssignStmt
  | ExprStmt
  | IfStmt
  | ForStmt
  | WhileStmt
  | ReturnStmt
  | JumpStmt
  | CommentStmt
  | PreprocessorStmt
  | BlockStmt
  | VerbatimStmt;

/**
 * `value` converted for storing into `type`: arithmetic values of another type get an explicit
 * `static_cast` (so the conversion is visible and `evaluate` sees it), pointers must match up to
 * adding `const`, opaque types are left to C++ (converting constructors).
 */
export function convertForStore(value: Expr, type: CType, what: string): Expr {
  if (sameType(value.type, type)) return value;
  if (isArithmetic(type) && isArithmetic(value.type)) return simplifyNode(makeCast(value, type));
  if (type.kind === 'pointer' && value.type.kind === 'pointer' && sameType(type.pointee, value.type.pointee)) {
    if (value.type.constPointee && !type.constPointee) throw new CodegenTypeError(what, 'cannot drop const from a pointer');
    return value;
  }
  if (type.kind === 'opaque' || value.type.kind === 'opaque') return value;
  throw new CodegenTypeError(what, `cannot store ${typeToString(value.type)} into ${typeToString(type)}`);
}

/** Options of a declaration. */
export interface DeclOptions {
  readonly storage?: Storage;
  readonly qualifiers?: readonly string[];
}

/** A declaration statement (the initializer is converted to `type`, see `convertForStore`). */
export function declStmt(name: string, type: CType, init: Expr | null, options: DeclOptions = {}): DeclStmt {
  if (!isIdentifier(name)) throw new ArgumentError('name', 'must be a C++ identifier', name);
  if (type.kind === 'void') throw new CodegenTypeError(name, 'a variable cannot be void');
  const storage = options.storage ?? 'mutable';
  if (type.kind === 'array' && init !== null) throw new CodegenTypeError(name, 'array declarations take no initializer here');
  if (storage !== 'mutable' && init === null && type.kind !== 'array') {
    throw new CodegenTypeError(name, `a ${storage} declaration needs an initializer`);
  }
  return Object.freeze({
    kind: 'decl',
    name,
    type,
    init: init === null ? null : convertForStore(init, type, `initializer of ${name}`),
    storage,
    qualifiers: Object.freeze([...(options.qualifiers ?? [])]),
  });
}

/** An assignment `target op value`; plain `=` converts `value` to the target's type. */
export function assignStmt(target: Expr, value: Expr, op: AssignOp = '='): AssignStmt {
  if (!isLvalue(target)) throw new CodegenTypeError('assignment target', 'must be an lvalue (variable, member, element, *p)', target.kind);
  if (target.type.kind === 'array') throw new CodegenTypeError('assignment target', 'arrays cannot be assigned');
  if (op !== '=' && !isArithmetic(target.type) && !(target.type.kind === 'pointer' && (op === '+=' || op === '-='))) {
    throw new CodegenTypeError('assignment target', `${op} needs an arithmetic target`, typeToString(target.type));
  }
  const v = op === '=' ? convertForStore(value, target.type, 'assigned value') : value;
  return Object.freeze({ kind: 'assign', target, op, value: v });
}

/** An expression statement. */
export function exprStmt(expr: Expr): ExprStmt {
  return Object.freeze({ kind: 'expr', expr });
}

/** A block of statements. */
export function blockStmt(body: readonly Stmt[]): BlockStmt {
  return Object.freeze({ kind: 'block', body: Object.freeze([...body]) });
}

/** A comment (multi-line text gives one `//` line per line). */
export function commentStmt(text: string): CommentStmt {
  return Object.freeze({ kind: 'comment', text });
}

/** A preprocessor line; must start with `#` and be one line. */
export function preprocessorStmt(text: string): PreprocessorStmt {
  if (!text.startsWith('#') || text.includes('\n'))
    throw new ArgumentError('text', 'a preprocessor line starts with # and has no newline', text);
  return Object.freeze({ kind: 'preprocessor', text });
}

/** Verbatim lines. */
export function verbatimStmt(lines: string | readonly string[]): VerbatimStmt {
  const all = typeof lines === 'string' ? lines.split('\n') : [...lines];
  return Object.freeze({ kind: 'verbatim', lines: Object.freeze(all) });
}
