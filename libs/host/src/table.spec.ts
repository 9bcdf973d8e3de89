import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { formatMarkdownTable, formatTable } from './table.ts';

const columns = ['kernel', 'ms', 'TFLOP/s'];
const rows = [
  ['fmha_fwd_d128_fp16', 1.25, 480.5],
  ['gemm', 0.5, 12],
];

describe('formatTable', () => {
  it('golden: numbers right-aligned, text left-aligned, dashed rule', () => {
    expect(formatTable(columns, rows)).toBe(
      [
        'kernel                ms  TFLOP/s',
        '------------------  ----  -------',
        'fmha_fwd_d128_fp16  1.25    480.5',
        'gemm                 0.5       12',
      ].join('\n'),
    );
  });

  it('golden: explicit alignments, empty cells, gap', () => {
    expect(
      formatTable(
        ['a', 'b', 'c'],
        [
          ['x', null, 'yy'],
          ['long', 7, undefined],
        ],
        { align: ['right', 'center', undefined], gap: 1 },
      ),
    ).toBe(['   a b c', '---- - --', '   x   yy', 'long 7'].join('\n'));
  });

  const cell = fc.oneof(
    fc.string({ maxLength: 8 }).map((s) => s.replace(/\s/g, 'x')),
    fc.integer(),
    fc.constant(null),
  );
  it('every line (before trimming) has the same width', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 5 })
          .chain((n) => fc.array(fc.array(cell, { minLength: n, maxLength: n }), { maxLength: 6 }).map((r) => [n, r] as const)),
        ([n, body]) => {
          const header = Array.from({ length: n }, (_, i) => `c${i}`);
          const lines = formatTable(header, body, { align: 'center' }).split('\n');
          expect(lines.length).toBe(body.length + 2);
          const ruleWidth = lines[1]!.length;
          for (const line of lines) expect(line.length).toBeLessThanOrEqual(ruleWidth);
        },
      ),
    );
  });

  it('rejects ragged rows and bad alignments', () => {
    expect(() => formatTable(['a', 'b'], [['x']])).toThrow('formatTable: row 0 must have 2 cells like the columns (got ["x"])');
    expect(() => formatTable(['a'], [], { align: ['left', 'right'] })).toThrow(ArgumentError);
    expect(() => formatTable([], [])).toThrow(ArgumentError);
  });
});

describe('formatMarkdownTable', () => {
  it('golden', () => {
    expect(formatMarkdownTable(columns, rows)).toBe(
      [
        '| kernel             |   ms | TFLOP/s |',
        '| :----------------- | ---: | ------: |',
        '| fmha_fwd_d128_fp16 | 1.25 |   480.5 |',
        '| gemm               |  0.5 |      12 |',
      ].join('\n'),
    );
  });

  it('escapes pipes and centres', () => {
    expect(formatMarkdownTable(['a|b'], [['x']], { align: 'center' })).toBe(['| a\\|b |', '| :--: |', '|  x   |'].join('\n'));
  });
});
