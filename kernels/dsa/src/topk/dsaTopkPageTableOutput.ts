// The page-table output hook: the kernel stores the global cache slot of each selected token,
// blockTable[row / rowsPerSequence][pos >> 6] · 64 + (pos & 63) (FlashMLA's sparse indices).
import { add, bitAnd, cast, div, index, int32, int64, kernelParam, mul, shr, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_TOKENS } from '../dsaShape.ts';
import type { DsaTopkOutput, DsaTopkPageTable } from './dsaTopkOutput.ts';

const PAGE_SHIFT = Math.log2(DSA_PAGE_TOKENS);

/**
 * Stores global slots: position p of row r becomes blockTable[⌊r / rowsPerSequence⌋][p >> 6] · 64 +
 * (p & 63), int32 arithmetic. Kernel parameters: `block_table` (const int32*, [batch][max_pages]),
 * `max_pages`, `rows_per_sequence` (1 or 2). The launcher guarantees p >> 6 < max_pages.
 */
export const dsaTopkPageTableOutput: DsaTopkOutput = Object.freeze<DsaTopkOutput>({
  kind: 'pageTable',
  params: Object.freeze({
    block_table: kernelParam.pointer(int32, { const: true, align: 4 }),
    max_pages: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
    rows_per_sequence: kernelParam.i32({ range: [1, 2] }),
  }),
  emitValue(b: BlockBuilder, args: Readonly<Record<string, Expr>>, row: Expr, pos: Expr): Expr {
    const sequence = b.let('sequence', int64, cast(div(row, args['rows_per_sequence']!), int64));
    const entry = add(mul(sequence, cast(args['max_pages']!, int64)), cast(shr(pos, PAGE_SHIFT), int64));
    const page = b.let('page', int32, index(args['block_table']!, entry));
    return add(mul(page, DSA_PAGE_TOKENS), bitAnd(pos, DSA_PAGE_TOKENS - 1));
  },
  value(row: number, pos: number, table?: DsaTopkPageTable): number {
    if (table === undefined) throw new DsaArgumentError('table', 'the page-table form needs a page table', table);
    const page = table.blockTable[Math.floor(row / table.rowsPerSequence) * table.maxPages + (pos >> PAGE_SHIFT)]!;
    return Math.imul(page, DSA_PAGE_TOKENS) + (pos & (DSA_PAGE_TOKENS - 1));
  },
});
