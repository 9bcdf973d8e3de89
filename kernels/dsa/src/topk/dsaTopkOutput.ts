// The output hook of the top-k kernel: what it stores for a selected position. An interface with
// one implementation per form (token indices, page-table slots), composed into the instance, so the
// selection emitter knows nothing of either form.
import type { BlockBuilder, Expr, KernelParams } from '@tilekit/codegen';

/** The forms the kernel can write a selection in. */
export type DsaTopkOutputKind = 'index' | 'pageTable';

/** The page table the page-table form reads, on the CPU (the TS twin's input). */
export interface DsaTopkPageTable {
  /** int32 [batch][maxPages]: physical page of each logical page of a sequence. */
  readonly blockTable: Int32Array | readonly number[];
  readonly maxPages: number;
  /** Rows per sequence: next_n (1, or 2 with one multi-token-prediction draft). */
  readonly rowsPerSequence: number;
}

/**
 * Turns selected positions into the values the kernel stores. `emitValue` emits the conversion in
 * the kernel (from the hook's own kernel parameters, declared by `params`); `value` is its TS twin.
 * Only selected positions go through the hook: padding stays −1 in every form.
 */
export interface DsaTopkOutput {
  /** The form (part of the instance key). */
  readonly kind: DsaTopkOutputKind;
  /** Kernel parameters the conversion reads (appended to the kernel's own). */
  readonly params: KernelParams;
  /** The stored value (int32) of selected position `pos` (int32, ≥ 0) of row `row` (int32); `args` holds `params` as variables. */
  emitValue(b: BlockBuilder, args: Readonly<Record<string, Expr>>, row: Expr, pos: Expr): Expr;
  /** What `emitValue` computes, on the CPU (`table` is needed by the page-table form only). */
  value(row: number, pos: number, table?: DsaTopkPageTable): number;
}

/** A selection ([rows][k] positions, −1 padded, e.g. dsaTopkReference's) in `output`'s form, on the CPU. */
export function dsaTopkOutputReference(positions: Int32Array, k: number, output: DsaTopkOutput, table?: DsaTopkPageTable): Int32Array {
  return positions.map((pos, i) => (pos < 0 ? -1 : output.value(Math.floor(i / k), pos, table)));
}
