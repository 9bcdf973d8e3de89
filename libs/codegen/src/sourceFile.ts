// A translation unit as data (header, requirements, namespace-scope items, dialect) and its
// rendering to text; `SourceBuilder` (sourceBuilder.ts) builds one.
import { CodeWriter } from './codeWriter.ts';
import type { CType } from './cType.ts';
import { children } from './expr.ts';
import type { Expr } from './expr.ts';
import { writeFunction } from './function.ts';
import type { FunctionDef } from './function.ts';
import { writeStmt } from './render.ts';
import type { RenderOptions } from './render.ts';
import { orderRequirements } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import type { CommentStmt, DeclStmt, PreprocessorStmt, Stmt, VerbatimStmt } from './stmt.ts';

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
