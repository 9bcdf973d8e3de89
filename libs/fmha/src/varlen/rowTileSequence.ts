import {
  add,
  bool,
  cast,
  ge,
  index,
  int32,
  mul,
  ne,
  select,
  sub,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';

/** The locals `emitRowTileSequence` declares for one block of a row kernel. */
export interface RowTileSequence {
  /** blockIdx.z: the batch (group mode: the sequence). */
  readonly batch: VarExpr;
  /** blockIdx.y: the query head. */
  readonly head: VarExpr;
  /** The tile's first row within the sequence: blockIdx.x · tileRows. */
  readonly m0: VarExpr;
  /** True when the seqstart pointer is not null (group / varlen mode). */
  readonly group: VarExpr;
  /** The sequence's first physical row: seqstart[batch] in group mode, else 0. */
  readonly rowStart: VarExpr;
  /** The sequence's rows: seqstart[batch + 1] − seqstart[batch] in group mode, else `seqlen`. */
  readonly seqlen: VarExpr;
}

/** What `emitRowTileSequence` needs: the tile's rows, the kernel's seqlen and nullable seqstart parameters. */
export interface RowTileSequenceSpec {
  /** Rows per tile (a constant, or an `int` kernel parameter). */
  readonly tileRows: number | Expr;
  /** The batch-mode rows per sequence (an int32 parameter). */
  readonly seqlen: Expr;
  /** The group-mode sequence starts (a nullable `const int32*` parameter). */
  readonly seqstart: Expr;
  /** The C name of the batch local (default `batch`). */
  readonly batchName?: string;
  /** Return from blocks whose tile starts past the sequence's end (default true; false leaves that to the caller). */
  readonly returnPastEnd?: boolean;
}

/**
 * The prologue of the attention row kernels (the forward's split-KV combine, the backward's
 * dot_do_o and convert_dq), launched on a grid (row tiles, query heads, batch): declares the
 * block's batch, head and first row, resolves batch or group mode from the seqstart pointer (its
 * sequence's first physical row and length), and returns from blocks whose tile starts past the
 * sequence's end (unless `returnPastEnd` is false). Sparge's K-mean and pooling kernels use it too. Postcondition (checked by compiling and running the kernels): after it, rows
 * [m0, min(m0 + tileRows, seqlen)) of physical rows rowStart + … are the block's to handle.
 */
export function emitRowTileSequence(b: BlockBuilder, target: Target, spec: RowTileSequenceSpec): RowTileSequence {
  const batch = b.let(spec.batchName ?? 'batch', int32, cast(target.blockIdx('z'), int32));
  const head = b.let('head', int32, cast(target.blockIdx('y'), int32));
  const m0 = b.let('m0', int32, mul(cast(target.blockIdx('x'), int32), spec.tileRows));
  const group = b.let('group_mode', bool, ne(select(spec.seqstart, 1, 0), 0));
  const rowStart = b.declare('row_q', int32, 0, { storage: 'mutable' });
  const seqlen = b.declare('sq', int32, spec.seqlen, { storage: 'mutable' });
  b.if(group, (g) => {
    g.assign(rowStart, index(spec.seqstart, batch));
    g.assign(seqlen, sub(index(spec.seqstart, add(batch, 1)), rowStart));
  });
  if (spec.returnPastEnd !== false) b.if(ge(m0, seqlen), (x) => x.return());
  return { batch, head, m0, group, rowStart, seqlen };
}
