// The resident Q of a sparse MLA block: 64 heads × 576 bf16 copied once into nine 128B-swizzled slabs.
import {
  add,
  cast,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  div,
  fenceProxyAsyncShared,
  int32,
  int64,
  lit,
  mod,
  mul,
  pointer,
  uint8,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { DSA_SPARSE_MLA_QK_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_Q_SLAB_BYTES, type DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';
import { DSA_SPARSE_MLA_ROW_CHUNKS, dsaBf16RowBytes, emitDsaSwizzledRowCopy } from './emitDsaSwizzledRowCopy.ts';

/** What {@link emitDsaSparseMlaLoadQ} reads and where it writes. */
export interface DsaSparseMlaLoadQ {
  /** `const bf16*` of the query rows [rows][576]; row0 (`int64`) is the block's first head row. */
  readonly q: Expr;
  readonly row0: Expr;
  /** `int` thread index and the block's thread count (a multiple of 64 dividing 64 · 72). */
  readonly tid: Expr;
  readonly threads: number;
  /** `uint8*` of the 1024-aligned shared memory and its layout. */
  readonly smem: Expr;
  readonly layout: DsaSparseMlaSmem;
}

/**
 * Every thread copies its share of Q's 64 × 72 chunks (row tid / (threads / 64), an equal run of the row's
 * chunks), then waits for its copies and fences them for wgmma (the caller's barrier publishes them).
 */
export function emitDsaSparseMlaLoadQ(b: BlockBuilder, t: Target, v: DsaSparseMlaLoadQ): void {
  const parts = v.threads / DSA_SPARSE_MLA_HEAD_BLOCK;
  const chunks = DSA_SPARSE_MLA_ROW_CHUNKS / parts;
  b.comment(
    `Q: ${DSA_SPARSE_MLA_HEAD_BLOCK} heads × ${DSA_SPARSE_MLA_QK_DIM}, ${parts} threads per head row, ${chunks} chunks of 16 bytes each`,
  );
  const row = b.let('q_row', int32, div(v.tid, parts));
  const source = dsaBf16RowBytes(b, 'q_src', v.q, cast(add(v.row0, cast(row, int64)), int64), lit(DSA_SPARSE_MLA_QK_DIM, int32));
  emitDsaSwizzledRowCopy(b, t, {
    slabs: b.let('q_smem', pointer(uint8), add(v.smem, v.layout.q)),
    slabBytes: DSA_SPARSE_MLA_Q_SLAB_BYTES,
    row,
    source,
    first: mul(mod(v.tid, parts), chunks),
    count: chunks,
    srcBytes: 16,
  });
  b.expr(cpAsyncCommitGroup(t));
  b.expr(cpAsyncWaitGroup(t, 0));
  b.expr(fenceProxyAsyncShared(t));
}
