import { ArgumentError } from '@tilekit/numeric';
import { CodeWriter } from './codeWriter.ts';
import type { CType } from './cType.ts';
import { children, makeVar } from './expr.ts';
import type { Expr, VarExpr } from './expr.ts';
import { declareFunction, defineFunction, writeFunction } from './function.ts';
import type { FunctionDef, FunctionSpec, ParamSpec, ParamVars } from './function.ts';
import type { BlockBuilder } from './blockBuilder.ts';
import { NameScope } from './nameScope.ts';
import { lit } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { writeStmt } from './render.ts';
import type { RenderOptions } from './render.ts';
import { include, orderRequirements } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import { commentStmt, declStmt, preprocessorStmt, verbatimStmt } from './stmt.ts';
import type { CommentStmt, DeclStmt, PreprocessorStmt, Stmt, Storage, Unroll, VerbatimStmt } from './stmt.ts';

/** `namespace name { items }` */
export interface NamespaceDecl {
  readonly kind: 'namespace';
  readonly name: string;
  readonly items: readonly TopLevel[];
}

/** What a translation unit holds at namespace scope. */
export type TopLevel = FunctionDef | DeclStmt | NamespaceDecl | CommentStmt | PreprocessorStmt | VerbatimStmt;

/**
 * What a source file needs from its target when rendered: its own requirements (a prelude that
 * defines `__global__` for header-less HIP, for example) and how to spell loop-unroll hints.
 */
export interface SourceDialect extends RenderOptions {
  /** Requirements every file for this target starts with. */
  readonly prelude?: readonly Requirement[];
}

/** A translation unit: header comment, includes, then items, rendered for one dialect. */
export interface SourceFile {
  readonly kind: 'source';
  readonly header: readonly string[];
  readonly includes: readonly Requirement[];
  readonly items: readonly TopLevel[];
  readonly dialect: SourceDialect;
}

function typeRequirements(t: CType, out: Requirement[]): void {
  if (t.kind === 'opaque') out.push(...t.requires);
  else if (t.kind === 'pointer') typeRequirements(t.pointee, out);
  else if (t.kind === 'array') typeRequirements(t.element, out);
}

function exprRequirements(e: Expr, out: Requirement[]): void {
  typeRequirements(e.type, out);
  if (e.kind === 'call' || e.kind === 'verbatim') out.push(...e.requires);
  for (const c of children(e)) exprRequirements(c, out);
}

function stmtRequirements(s: Stmt, out: Requirement[]): void {
  switch (s.kind) {
    case 'decl':
      typeRequirements(s.type, out);
      if (s.init !== null) exprRequirements(s.init, out);
      return;
    case 'assign':
      exprRequirements(s.target, out);
      exprRequirements(s.value, out);
      return;
    case 'expr':
      exprRequirements(s.expr, out);
      return;
    case 'return':
      if (s.value !== null) exprRequirements(s.value, out);
      return;
    case 'if':
      exprRequirements(s.cond, out);
      stmtRequirements(s.then, out);
      if (s.else !== null) stmtRequirements(s.else, out);
      return;
    case 'while':
      exprRequirements(s.cond, out);
      stmtRequirements(s.body, out);
      return;
    case 'for':
      if (s.init !== null) stmtRequirements(s.init, out);
      if (s.cond !== null) exprRequirements(s.cond, out);
      if (s.step !== null) stmtRequirements(s.step, out);
      stmtRequirements(s.body, out);
      return;
    case 'block':
      for (const x of s.body) stmtRequirements(x, out);
      return;
    default:
      return;
  }
}

function itemRequirements(item: TopLevel, out: Requirement[]): void {
  if (item.kind === 'function') {
    typeRequirements(item.returnType, out);
    for (const p of item.params) typeRequirements(p.type, out);
    if (item.body !== null) stmtRequirements(item.body, out);
  } else if (item.kind === 'namespace') {
    for (const i of item.items) itemRequirements(i, out);
  } else {
    stmtRequirements(item, out);
  }
}

/**
 * Every requirement of a file, in emission order: the dialect prelude, the explicit includes, then
 * what the types and calls in the items need (see `orderRequirements`).
 */
export function collectRequirements(file: SourceFile): Requirement[] {
  const out: Requirement[] = [...(file.dialect.prelude ?? []), ...file.includes];
  for (const item of file.items) itemRequirements(item, out);
  return orderRequirements(out);
}

function writeItem(w: CodeWriter, item: TopLevel, options: RenderOptions): void {
  if (item.kind === 'function') writeFunction(w, item, options);
  else if (item.kind === 'namespace') {
    w.line(`namespace ${item.name} {`);
    w.blank();
    writeItems(w, item.items, options);
    w.blank();
    w.line(`}  // namespace ${item.name}`);
  } else writeStmt(w, item, options);
}

function writeItems(w: CodeWriter, items: readonly TopLevel[], options: RenderOptions): void {
  items.forEach((item, i) => {
    const prev = items[i - 1];
    // Functions and namespaces stand apart; runs of declarations and comments stay together.
    const apart = item.kind === 'function' || item.kind === 'namespace' || prev?.kind === 'function' || prev?.kind === 'namespace';
    if (i > 0 && apart) w.blank();
    writeItem(w, item, options);
  });
}

/**
 * The text of a translation unit: header comment, `#include` lines (each header once), prelude and
 * helper snippets (each once, dependencies first), then the items, functions separated by a blank
 * line. Postcondition: deterministic for equal inputs; every requirement of every type, call and
 * verbatim expression used is emitted before the first item.
 */
export function renderSource(file: SourceFile): string {
  const options: RenderOptions = file.dialect;
  const w = new CodeWriter(options.indent ?? 2);
  for (const h of file.header) w.line(h === '' ? '//' : `// ${h}`);
  w.blank();
  const reqs = collectRequirements(file);
  for (const r of reqs) if (r.kind === 'include') w.line(`#include ${r.header}`);
  w.blank();
  for (const r of reqs) {
    if (r.kind !== 'snippet') continue;
    for (const l of r.lines) w.line(l);
    w.blank();
  }
  writeItems(w, file.items, options);
  return w.toString();
}

/** Options of a source builder. */
export interface SourceOptions {
  /** Header comment lines (a string is split on newlines). */
  readonly header?: string | readonly string[];
  /** The dialect (a `Target` is one). Default: plain C++ with CUDA-style unroll pragmas. */
  readonly dialect?: SourceDialect;
  /** Spaces per indentation level (default: the dialect's, else 2). */
  readonly indent?: number;
}

/** Options of a global variable. */
export interface GlobalOptions {
  readonly storage?: Storage;
  /** `static`, `__constant__`, `__device__`, ... */
  readonly qualifiers?: readonly string[];
}

/**
 * Builds a translation unit. Function and global names are exact (they are the file's API: a
 * kernel's entry point), so a repeated name throws `DuplicateNameError`; locals inside functions
 * get unique names that also avoid every top-level name declared before them.
 *
 * ```ts
 * const src = new SourceBuilder({ dialect: targets.sm_90a, header: 'generated by tilekit' });
 * src.function({ name: 'k', qualifiers: targets.sm_90a.kernelQualifiers(), params: { out: pointer(float32) } },
 *   (b, { out }) => { b.assign(index(out, targets.sm_90a.threadIdx('x')), 1); });
 * src.render();
 * ```
 */
export class SourceBuilder {
  readonly scope: NameScope;
  readonly #items: TopLevel[] = [];
  readonly #includes: Requirement[];
  readonly #header: readonly string[];
  readonly #dialect: SourceDialect;
  readonly #namespace: readonly string[];

  constructor(
    options: SourceOptions = {},
    scope: NameScope = new NameScope(),
    includes: Requirement[] = [],
    namespace: readonly string[] = [],
  ) {
    this.scope = scope;
    this.#includes = includes;
    this.#namespace = namespace;
    const h = options.header ?? [];
    this.#header = typeof h === 'string' ? h.split('\n') : [...h];
    const dialect = options.dialect ?? {};
    // Keep the dialect object itself (a Target's methods need their `this`); only wrap to override indent.
    this.#dialect =
      options.indent === undefined
        ? dialect
        : {
            indent: options.indent,
            ...(dialect.prelude === undefined ? {} : { prelude: dialect.prelude }),
            ...(dialect.unrollPragma === undefined
              ? {}
              : {
                  unrollPragma: (u: Exclude<Unroll, null>) =>
                    (dialect.unrollPragma as NonNullable<SourceDialect['unrollPragma']>).call(dialect, u),
                }),
          };
  }

  /** Add `#include <header>` (give `<name>` or `"name"`; a bare name gets angle brackets). */
  include(header: string): this {
    this.#includes.push(include(/^[<"]/.test(header) ? header : `<${header}>`));
    return this;
  }

  /** Add a requirement (include or snippet) explicitly. */
  require(r: Requirement): this {
    this.#includes.push(r);
    return this;
  }

  /** Define a function (see `defineFunction`) and add it to the file. */
  function<P extends Readonly<Record<string, ParamSpec>>>(
    spec: Omit<FunctionSpec<P>, 'scope' | 'namespace'>,
    body: (b: BlockBuilder, params: ParamVars<P>) => void,
  ): FunctionDef {
    this.scope.reserve(spec.name, 'source file');
    const fn = defineFunction({ ...spec, scope: this.scope, namespace: this.#namespace }, body);
    this.#items.push(fn);
    return fn;
  }

  /** Declare a function without a body (a prototype). */
  declare<P extends Readonly<Record<string, ParamSpec>>>(spec: Omit<FunctionSpec<P>, 'scope' | 'namespace'>): FunctionDef {
    this.scope.reserve(spec.name, 'source file');
    const fn = declareFunction({ ...spec, namespace: this.#namespace });
    this.#items.push(fn);
    return fn;
  }

  /** Add an already-built function (its name must be free). */
  add(fn: FunctionDef): FunctionDef {
    this.scope.reserve(fn.name, 'source file');
    this.#items.push(fn);
    return fn;
  }

  /** A global variable `[qualifiers] T name [= init];`; returns a reference to it. */
  global(name: string, type: CType, init: ExprLike | null = null, options: GlobalOptions = {}): VarExpr {
    this.scope.reserve(name, 'source file');
    const e =
      init === null
        ? null
        : typeof init === 'object'
          ? init
          : lit(init, type.kind === 'int' || type.kind === 'float' || type.kind === 'bool' ? type : undefined);
    this.#items.push(declStmt(name, type, e, options));
    return makeVar([...this.#namespace, name].join('::'), type);
  }

  /** `namespace name { ... }`; names declared inside are reserved file-wide (no overloading by namespace). */
  namespace(name: string, body: (ns: SourceBuilder) => void): this {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ArgumentError('name', 'a namespace name must be an identifier', name);
    const ns = new SourceBuilder({ dialect: this.#dialect }, this.scope, this.#includes, [...this.#namespace, name]);
    body(ns);
    this.#items.push(Object.freeze({ kind: 'namespace', name, items: Object.freeze([...ns.#items]) }));
    return this;
  }

  /** `// text` at file scope. */
  comment(text: string): this {
    this.#items.push(commentStmt(text));
    return this;
  }

  /** A preprocessor line at file scope. */
  preprocessor(line: string): this {
    this.#items.push(preprocessorStmt(line));
    return this;
  }

  /** Verbatim lines at file scope (leaf primitives only). */
  verbatim(lines: string | readonly string[]): this {
    this.#items.push(verbatimStmt(lines));
    return this;
  }

  /** The file as data. */
  build(): SourceFile {
    return Object.freeze({
      kind: 'source',
      header: Object.freeze([...this.#header]),
      includes: Object.freeze([...this.#includes]),
      items: Object.freeze([...this.#items]),
      dialect: this.#dialect,
    });
  }

  /** The file as text (`renderSource(build())`). */
  render(): string {
    return renderSource(this.build());
  }
}
