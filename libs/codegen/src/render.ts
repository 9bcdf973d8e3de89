import { CodeWriter } from './codeWriter.ts';
import { typeToString } from './cType.ts';
import type { CType } from './cType.ts';
import { printExpr } from './printExpr.ts';
import type { AssignStmt, BlockStmt, DeclStmt, ExprStmt, IfStmt, Stmt, Unroll } from './stmt.ts';

/** How statements are laid out. */
export interface RenderOptions {
  /** Spaces per indentation level (default 2). */
  readonly indent?: number;
  /** Spell a loop's unroll hint (default: CUDA/HIP `#pragma unroll [n]`); `null` prints nothing. */
  readonly unrollPragma?: (unroll: Exclude<Unroll, null>) => string | null;
}

/** CUDA/HIP spelling of an unroll hint: `#pragma unroll`, `#pragma unroll n`, `#pragma unroll 1`. */
export function cudaUnrollPragma(unroll: Exclude<Unroll, null>): string {
  if (unroll === true) return '#pragma unroll';
  if (unroll === false) return '#pragma unroll 1';
  return `#pragma unroll ${unroll}`;
}

/** `T name` for a declaration or parameter (`const float* __restrict__ a`, `float s[4][8]`). */
export function declarator(type: CType, name: string, constant = false): string {
  if (type.kind === 'array') {
    const dims: number[] = [];
    let t: CType = type;
    while (t.kind === 'array') {
      dims.push(t.length);
      t = t.element;
    }
    return `${constant ? 'const ' : ''}${typeToString(t)} ${name}${dims.map((d) => `[${d}]`).join('')}`;
  }
  if (type.kind === 'pointer') return `${typeToString(type)}${constant ? ' const' : ''} ${name}`;
  return `${constant ? 'const ' : ''}${typeToString(type)} ${name}`;
}

function declText(s: DeclStmt): string {
  const head = s.qualifiers.length > 0 ? `${s.qualifiers.join(' ')} ` : '';
  const ce = s.storage === 'constexpr' ? 'constexpr ' : '';
  const init = s.init === null ? '' : ` = ${printExpr(s.init)}`;
  return `${head}${ce}${declarator(s.type, s.name, s.storage === 'const')}${init}`;
}

function assignText(s: AssignStmt): string {
  if ((s.op === '+=' || s.op === '-=') && s.value.kind === 'literal' && s.value.value === 1n) {
    return `${s.op === '+=' ? '++' : '--'}${printExpr(s.target)}`;
  }
  return `${printExpr(s.target)} ${s.op} ${printExpr(s.value)}`;
}

function stepText(s: AssignStmt | ExprStmt): string {
  return s.kind === 'assign' ? assignText(s) : printExpr(s.expr);
}

/** Write one statement. */
export function writeStmt(w: CodeWriter, s: Stmt, options: RenderOptions = {}): void {
  switch (s.kind) {
    case 'decl':
      w.line(`${declText(s)};`);
      return;
    case 'assign':
      w.line(`${assignText(s)};`);
      return;
    case 'expr':
      w.line(`${printExpr(s.expr)};`);
      return;
    case 'return':
      w.line(s.value === null ? 'return;' : `return ${printExpr(s.value)};`);
      return;
    case 'break':
    case 'continue':
      w.line(`${s.kind};`);
      return;
    case 'comment':
      for (const l of s.text.split('\n')) w.line(l === '' ? '//' : `// ${l}`);
      return;
    case 'preprocessor':
      w.line(s.text);
      return;
    case 'verbatim':
      for (const l of s.lines) w.line(l);
      return;
    case 'block':
      w.line('{');
      writeBody(w, s, options);
      w.line('}');
      return;
    case 'if':
      writeIf(w, s, options);
      return;
    case 'while':
      w.line(`while (${printExpr(s.cond)}) {`);
      writeBody(w, s.body, options);
      w.line('}');
      return;
    case 'for': {
      if (s.unroll !== null) {
        const pragma = options.unrollPragma !== undefined ? options.unrollPragma(s.unroll) : cudaUnrollPragma(s.unroll);
        if (pragma !== null) w.line(pragma);
      }
      const init = s.init === null ? '' : s.init.kind === 'decl' ? declText(s.init) : assignText(s.init);
      const cond = s.cond === null ? '' : ` ${printExpr(s.cond)}`;
      const step = s.step === null ? '' : ` ${stepText(s.step)}`;
      w.line(`for (${init};${cond};${step}) {`);
      writeBody(w, s.body, options);
      w.line('}');
      return;
    }
  }
}

function writeBody(w: CodeWriter, b: BlockStmt, options: RenderOptions): void {
  w.indented(() => {
    for (const s of b.body) writeStmt(w, s, options);
  });
}

function writeIf(w: CodeWriter, s: IfStmt, options: RenderOptions): void {
  w.line(`if (${printExpr(s.cond)}) {`);
  let cur: IfStmt = s;
  for (;;) {
    writeBody(w, cur.then, options);
    const e = cur.else;
    if (e === null || (e.kind === 'block' && e.body.length === 0)) break;
    if (e.kind === 'if') {
      w.line(`} else if (${printExpr(e.cond)}) {`);
      cur = e;
      continue;
    }
    w.line('} else {');
    writeBody(w, e, options);
    break;
  }
  w.line('}');
}

/**
 * The text of statements, one per line, nested blocks indented by `options.indent` (2) spaces.
 * Postcondition: deterministic (same input, same text) and ending in a single newline.
 */
export function renderStmts(stmts: readonly Stmt[], options: RenderOptions = {}): string {
  const w = new CodeWriter(options.indent ?? 2);
  for (const s of stmts) writeStmt(w, s, options);
  return w.toString();
}
