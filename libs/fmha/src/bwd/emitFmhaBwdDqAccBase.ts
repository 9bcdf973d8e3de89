// Where a backward dq_dk_dv block's dQ accumulator rows lie in the unified backward workspace
// (FmhaBwdWorkspace's layout): nsplits (int32) padded to 16 bytes, in group mode the int64 dq_acc
// offsets (batch + 1) padded to 16 bytes, then dq_acc [batch][nheadQ][nsplits][sq][hdimQ] (group
// mode: batch b at offsets[b], [nheadQ][nsplits_b][sq_b][hdimQ]). The kernel finds each region
// itself from the workspace pointer and the batch count.
import {
  add,
  bitAnd,
  cast,
  float32,
  index,
  int32,
  int64,
  mul,
  pointer,
  select,
  type BlockBuilder,
  type Expr,
  type VarExpr,
} from '@tilekit/codegen';

/** The kernel parameters the workspace arithmetic reads (as the dq_dk_dv kernels name them). */
export interface FmhaBwdDqAccParams {
  readonly workspace: Expr;
  readonly batch: Expr;
  readonly nhead_q: Expr;
  readonly seqlen_q: Expr;
}

/** What the block knows: its batch index, group mode and the query head dim. */
export interface FmhaBwdDqAccSpec {
  readonly batch: Expr;
  readonly group: Expr;
  readonly headDim: number;
  /**
   * Read nsplits from the workspace (`split`: one entry per batch in group mode, the block's
   * split count); absent: the atomic layout's single nsplits = 1, not read (a 16-byte header).
   */
  readonly nsplits?: { readonly split: boolean };
  /** The dq_acc base pointer's local (default `dq_acc`). */
  readonly dqAccName?: string;
}

/** The block's dq_acc: the nsplits it read (when it read them), the base pointer and the batch's element offset. */
export interface FmhaBwdDqAccBase {
  readonly nsplits?: VarExpr;
  readonly dqAcc: VarExpr;
  readonly batchBase: VarExpr;
  /** `dq_row0` = dq_acc + batch base + (head slot · sq) · hdimQ: the first row of the (int64) head slot (head · nsplits + split). */
  row(b: BlockBuilder, headSlot: Expr, seqlenQ: Expr): VarExpr;
}

/** The workspace's regions and the batch's dq_acc base (see the file's layout). */
export function emitFmhaBwdDqAccBase(
  b: BlockBuilder,
  a: FmhaBwdDqAccParams,
  s: FmhaBwdDqAccSpec & { readonly nsplits: { readonly split: boolean } },
): FmhaBwdDqAccBase & { readonly nsplits: VarExpr };
export function emitFmhaBwdDqAccBase(b: BlockBuilder, a: FmhaBwdDqAccParams, s: FmhaBwdDqAccSpec): FmhaBwdDqAccBase;
export function emitFmhaBwdDqAccBase(b: BlockBuilder, a: FmhaBwdDqAccParams, s: FmhaBwdDqAccSpec): FmhaBwdDqAccBase {
  const { batch, group, headDim } = s;
  let nsplitsBytes: Expr | number = 16;
  if (s.nsplits) {
    const count = b.let('nsplits_count', int32, s.nsplits.split ? select(group, a.batch, 1) : 1);
    nsplitsBytes = b.let('nsplits_bytes', int32, bitAnd(add(mul(count, 4), 15), ~15));
  }
  const offsetsBytes = b.let('offsets_bytes', int32, select(group, bitAnd(add(mul(add(a.batch, 1), 8), 15), ~15), 0));
  let nsplits: VarExpr | undefined;
  if (s.nsplits) {
    const nsplitsPtr = b.let('nsplits_ptr', pointer(int32, { const: true }), cast(a.workspace, pointer(int32, { const: true })));
    nsplits = b.let('nsplits', int32, index(nsplitsPtr, s.nsplits.split ? select(group, batch, 0) : 0));
  }
  const offsetsPtr = b.let(
    'offsets_ptr',
    pointer(int64, { const: true }),
    cast(add(a.workspace, nsplitsBytes), pointer(int64, { const: true })),
  );
  const dqAcc = b.let(s.dqAccName ?? 'dq_acc', pointer(float32), cast(add(a.workspace, add(nsplitsBytes, offsetsBytes)), pointer(float32)));
  // Per batch: [nheadQ][nsplits_b][sq_b][hdimQ] with sq_b the physical query rows.
  const rows = nsplits ? mul(cast(nsplits, int64), cast(a.seqlen_q, int64)) : cast(a.seqlen_q, int64);
  const batchBase = b.let(
    'dq_batch_base',
    int64,
    select(group, index(offsetsPtr, batch), mul(mul(mul(cast(batch, int64), a.nhead_q), rows), headDim)),
  );
  return {
    ...(nsplits ? { nsplits } : {}),
    dqAcc,
    batchBase,
    row: (bb, headSlot, seqlenQ) =>
      bb.let('dq_row0', pointer(float32), add(dqAcc, add(batchBase, mul(mul(headSlot, cast(seqlenQ, int64)), headDim)))),
  };
}
