import { describe, expect, it } from 'vitest';
import { CodegenTypeError } from './errors.ts';
import { BlockBuilder } from './blockBuilder.ts';
import { bool, float32, int32, int64, pointer, uint32 } from './cType.ts';
import { add, call, div, index, lit, lt, mod, mul, variable } from './ops.ts';
import type { VarExpr } from './expr.ts';
import { assignStmt } from './stmt.ts';
import { CodeWriter } from './codeWriter.ts';
import { printExpr } from './printExpr.ts';
import { renderStmts } from './render.ts';
import { host } from './hostTarget.ts';
import { voidType } from './cType.ts';

const render = (b: BlockBuilder, options = {}): string => renderStmts(b.statements, options);

describe('BlockBuilder', () => {
  it('declares unique locals and returns references to them', () => {
    const b = new BlockBuilder();
    const x = variable('x', int32);
    const y = variable('y', int32);
    const i = b.let('i', int32, add(x, mul(y, 4)));
    const i2 = b.let('i', int32, add(i, 1));
    const acc = b.var('acc', int64, 0);
    b.assign(acc, i2, '+=');
    b.assign(acc, mul(acc, 2));
    b.constexpr('k', int32, 16);
    expect(render(b)).toBe(
      [
        'const int i = x + y * 4;',
        'const int i_1 = i + 1;',
        'long long acc = 0ll;',
        'acc += i_1;',
        'acc = acc * 2ll;',
        'constexpr int k = 16;',
        '',
      ].join('\n'),
    );
  });

  it('propagates the value range of a const into later folds', () => {
    const b = new BlockBuilder();
    const x = variable('x', int32);
    const low = b.let('low', int32, mod(variable('u', uint32), 16));
    expect(printExpr(div(low, 4))).toBe('low >> 2');
    const any = b.let('any', int32, x);
    expect(printExpr(div(any, 4))).toBe('any / 4');
  });

  it('emits if / else if / else, loops with unroll pragmas, while, blocks, comments', () => {
    const b = new BlockBuilder();
    const n = variable('n', int32);
    const out = variable('out', pointer(float32));
    b.comment('two lines\nof comment');
    b.if(
      lt(n, 0),
      (t) => t.return(),
      (e) =>
        e.if(
          lt(n, 8),
          (t) => t.expr(call('f', [n], voidType)),
          (e2) => e2.break(),
        ),
    );
    b.forRange({ to: n, unroll: 4 }, (l, i) => {
      l.assign(index(out, i), 0);
      l.forRange({ name: 'i', from: 2, to: 10, step: 2, unroll: true }, (m, j) => m.assign(index(out, j), 1));
    });
    b.while(lt(n, 3), (w) => w.continue());
    b.block((blk) => blk.let('t', bool, true));
    b.pragma('nounroll');
    b.verbatim('asm volatile("" ::: "memory");');
    expect(render(b)).toBe(
      [
        '// two lines',
        '// of comment',
        'if (n < 0) {',
        '  return;',
        '} else if (n < 8) {',
        '  f(n);',
        '} else {',
        '  break;',
        '}',
        '#pragma unroll 4',
        'for (int i = 0; i < n; ++i) {',
        '  out[i] = 0.0f;',
        '  #pragma unroll',
        '  for (int i_1 = 2; i_1 < 10; i_1 += 2) {',
        '    out[i_1] = 1.0f;',
        '  }',
        '}',
        'while (n < 3) {',
        '  continue;',
        '}',
        '{',
        '  const bool t = true;',
        '}',
        '#pragma nounroll',
        'asm volatile("" ::: "memory");',
        '',
      ].join('\n'),
    );
  });

  it('spells unroll hints per target (g++ has no count-less full unroll)', () => {
    const b = new BlockBuilder();
    b.forRange({ to: 4, unroll: true }, () => {});
    b.forRange({ to: 4, unroll: 2 }, () => {});
    expect(render(b, { unrollPragma: host.unrollPragma.bind(host) })).toBe(
      ['for (int i = 0; i < 4; ++i) {', '}', '#pragma GCC unroll 2', 'for (int i = 0; i < 4; ++i) {', '}', ''].join('\n'),
    );
  });

  it('gives a loop index its range and drops provably empty loops and dead branches', () => {
    const b = new BlockBuilder();
    b.forRange({ to: 8 }, (l, i) => {
      l.if(
        lt(i, 8),
        (t) => t.comment(`always: ${printExpr(div(i, 8))}`),
        (e) => e.comment('never'),
      );
    });
    b.forRange({ from: 4, to: 4 }, (l) => l.comment('never runs'));
    expect(render(b)).toBe(['for (int i = 0; i < 8; ++i) {', '  // always: 0', '}', ''].join('\n'));
  });

  it('checks returns against the function result type and converts them', () => {
    const b = new BlockBuilder(undefined, { returnType: int64 });
    b.return(variable('x', int32));
    expect(render(b)).toBe('return static_cast<long long>(x);\n');
    expect(() => b.return()).toThrow(CodegenTypeError);
    const v = new BlockBuilder(undefined, { returnType: voidType });
    expect(() => v.return(1)).toThrow(CodegenTypeError);
  });

  it('rejects assignments to non-lvalues and stores of the wrong kind', () => {
    const b = new BlockBuilder();
    const x = variable('x', int32);
    expect(() => b.assign(add(x, 1), 2)).toThrow(CodegenTypeError);
    expect(() => b.let('p', pointer(float32), variable('q', pointer(float32, { const: true })))).toThrow(/const/);
  });
});

describe('BlockBuilder: general loops and nesting', () => {
  it('builds a general for loop with its own scope', () => {
    const b = new BlockBuilder();
    b.let('k', int32, 1);
    b.for(
      { name: 'k', type: int32, value: 10 },
      (k) => (k === null ? null : lt(0, k)),
      (k) => (k === null ? null : assignStmt(k, lit(2, int32), '-=')),
      (l, k) => l.expr(call('use', [k as VarExpr], voidType)),
      false,
    );
    b.for(
      null,
      () => null,
      () => null,
      (l) => l.break(),
    );
    expect(render(b)).toBe(
      [
        'const int k = 1;',
        '#pragma unroll 1',
        'for (int k_1 = 10; k_1 > 0; k_1 -= 2) {',
        '  use(k_1);',
        '}',
        'for (;;) {',
        '  break;',
        '}',
        '',
      ].join('\n'),
    );
  });
});

describe('CodeWriter', () => {
  it('indents, trims and ends with one newline', () => {
    const w = new CodeWriter(4);
    w.line('a {')
      .indented(() => w.line('b;').blank().blank().line(''))
      .line('}')
      .blank();
    expect(w.toString()).toBe('a {\n    b;\n\n\n}\n');
    expect(new CodeWriter().toString()).toBe('');
  });
});
