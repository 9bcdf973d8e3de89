// The block's sequence and tensor bases in the backward dq_dk_dv kernels' prologue (the dense
// sm_90a one and FFPA's split-D sm_80 one): the sequence in batch or group (varlen) mode with the
// batch's physical key slot, and the (batch, head, row) bases of pointer-addressed tensors.
import { add, bool, cast, index, int32, int64, mul, ne, select, sub, type BlockBuilder, type Expr, type VarExpr } from '@tilekit/codegen';
import { emitFmhaFwdBase } from '../fwd/emitFmhaFwdBase.ts';
import type { FmhaFwdSequence, FmhaFwdSequenceParams } from '../fwd/emitFmhaFwdSequence.ts';

/** The block's sequence: as the forward's, plus the batch's physical key rows (`sk_slot`). */
export interface FmhaBwdSequence extends FmhaFwdSequence {
  readonly slotK: VarExpr;
}

/**
 * Resolves the sequence of `batch`: batch mode takes seqlen_q / seqlen_k rows from row 0; group
 * mode (a non-null seqstart_q) the rows [seqstart[b], seqstart[b + 1]) of one "batch" (the key
 * slot), with a per-batch seqlen_k array (when given) overriding the logical key count.
 */
export function emitFmhaBwdSequence(b: BlockBuilder, a: FmhaFwdSequenceParams, batch: Expr): FmhaBwdSequence {
  const group = b.let('group_mode', bool, ne(select(a.seqstart_q, 1, 0), 0));
  const rowQ = b.declare('row_q', int32, 0, { storage: 'mutable' });
  const rowK = b.declare('row_k', int32, 0, { storage: 'mutable' });
  const seqlenQ = b.declare('sq', int32, a.seqlen_q, { storage: 'mutable' });
  const seqlenK = b.declare('sk', int32, a.seqlen_k, { storage: 'mutable' });
  const slotK = b.declare('sk_slot', int32, a.seqlen_k, { storage: 'mutable' });
  b.if(group, (g) => {
    g.assign(rowQ, index(a.seqstart_q, batch));
    g.assign(rowK, index(a.seqstart_k, batch));
    g.assign(seqlenQ, sub(index(a.seqstart_q, add(batch, 1)), rowQ));
    g.assign(slotK, sub(index(a.seqstart_k, add(batch, 1)), rowK));
    g.assign(seqlenK, slotK);
    g.if(a.seqlen_k_ptr, (x) => x.assign(seqlenK, index(a.seqlen_k_ptr, batch)));
  });
  return { group, rowQ, rowK, seqlenQ, seqlenK, slotK };
}

/** Element strides of a pointer-addressed tensor: row (`int`), head and batch. */
export interface FmhaBwdRowStrides {
  readonly row: Expr;
  readonly head: Expr;
  readonly batch: Expr;
}

/** `name` = ptr + batch·strides.batch + head·strides.head + row·strides.row (64-bit arithmetic), as a local of ptr's type. */
export function emitFmhaBwdRowBase(
  b: BlockBuilder,
  name: string,
  ptr: VarExpr,
  strides: FmhaBwdRowStrides,
  batch: Expr,
  head: Expr,
  row: Expr,
): VarExpr {
  const rowOffset = mul(cast(row, int64), cast(strides.row, int64));
  return emitFmhaFwdBase(b, name, ptr, { batch, batchStride: strides.batch, head, headStride: strides.head, rowOffset });
}

/** The LSE (or D) row `name` of `head`: ptr + batch·lse_stride_batch + head·lse_stride_head + rowQ (64-bit arithmetic). */
export function emitFmhaBwdLseRow(
  b: BlockBuilder,
  name: string,
  ptr: VarExpr,
  a: { readonly lse_stride_head: Expr; readonly lse_stride_batch: Expr },
  batch: Expr,
  head: Expr,
  rowQ: Expr,
): VarExpr {
  return emitFmhaFwdBase(b, name, ptr, {
    batch,
    batchStride: a.lse_stride_batch,
    head,
    headStride: a.lse_stride_head,
    rowOffset: cast(rowQ, int64),
  });
}
