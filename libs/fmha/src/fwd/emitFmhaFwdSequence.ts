// The block's sequence and mask in the forward attention kernels' prologue (the sm_90a TMA/wgmma
// one, the sm_80 cp.async/mma.sync one and the sparse ones): the sequence in batch or group
// (varlen) mode and its window mask. Every forward kernel takes these parameters under the same
// names, so the CUDA they emit reads the same.
import { add, bool, ge, index, int32, ne, select, sub, type BlockBuilder, type Expr, type VarExpr } from '@tilekit/codegen';
import { emitGenericAttentionMask, GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';
import type { FmhaFwdMaskKind } from './fmhaFwdMaskKind.ts';

/** The kernel parameters the prologue reads (as the forward kernels name them). */
export interface FmhaFwdSequenceParams {
  readonly seqlen_q: Expr;
  readonly seqlen_k: Expr;
  /** Group mode when not null: sequence b is rows [seqstart_q[b], seqstart_q[b + 1]). */
  readonly seqstart_q: Expr;
  readonly seqstart_k: Expr;
  /** Group mode, optional: per-sequence key counts overriding the seqstart_k differences. */
  readonly seqlen_k_ptr: Expr;
  readonly mask_left: Expr;
  readonly mask_right: Expr;
  readonly mask_top_left: Expr;
}

/** The block's sequence: group mode, its first physical query/key rows and its lengths. */
export interface FmhaFwdSequence {
  readonly group: VarExpr;
  readonly rowQ: VarExpr;
  readonly rowK: VarExpr;
  readonly seqlenQ: VarExpr;
  readonly seqlenK: VarExpr;
}

/**
 * Resolves the sequence of `batch`: batch mode takes seqlen_q / seqlen_k rows from row 0; group
 * mode (a non-null seqstart_q) the rows [seqstart[b], seqstart[b + 1]) of one "batch", with a
 * per-batch seqlen_k array (when given) overriding the key count. Blocks whose first query row
 * `m0` lies past the sequence return.
 */
export function emitFmhaFwdSequence(b: BlockBuilder, a: FmhaFwdSequenceParams, batch: Expr, m0: Expr): FmhaFwdSequence {
  const group = b.let('group_mode', bool, ne(select(a.seqstart_q, 1, 0), 0));
  const rowQ = b.declare('row_q', int32, 0, { storage: 'mutable' });
  const rowK = b.declare('row_k', int32, 0, { storage: 'mutable' });
  const seqlenQ = b.declare('sq', int32, a.seqlen_q, { storage: 'mutable' });
  const seqlenK = b.declare('sk', int32, a.seqlen_k, { storage: 'mutable' });
  b.if(group, (g) => {
    g.assign(rowQ, index(a.seqstart_q, batch));
    g.assign(rowK, index(a.seqstart_k, batch));
    g.assign(seqlenQ, sub(index(a.seqstart_q, add(batch, 1)), rowQ));
    g.assign(seqlenK, sub(index(a.seqstart_k, add(batch, 1)), rowK));
    g.if(a.seqlen_k_ptr, (x) => x.assign(seqlenK, index(a.seqlen_k_ptr, batch)));
  });
  b.if(ge(m0, seqlenQ), (x) => x.return());
  return { group, rowQ, rowK, seqlenQ, seqlenK };
}

/**
 * The instance's mask over the block's sequence: none, or the run-time window (left, right,
 * top-left or bottom-right alignment) with its (y, x) held in locals, since every edge test and
 * element predicate reads them.
 */
export function emitFmhaFwdMask(
  b: BlockBuilder,
  kind: FmhaFwdMaskKind,
  a: FmhaFwdSequenceParams,
  seq: FmhaFwdSequence,
): GenericAttentionMaskCode {
  const { seqlenQ, seqlenK } = seq;
  const mask = emitGenericAttentionMask(
    kind === 'none' ? { kind: 'none' } : { kind: 'window', alignment: ne(a.mask_top_left, 0), left: a.mask_left, right: a.mask_right },
    seqlenQ,
    seqlenK,
  );
  return mask.masking
    ? new GenericAttentionMaskCode({
        masking: true,
        y: b.let('mask_y', int32, mask.y),
        x: b.let('mask_x', int32, mask.x),
        seqlenQ,
        seqlenK,
      })
    : mask;
}
