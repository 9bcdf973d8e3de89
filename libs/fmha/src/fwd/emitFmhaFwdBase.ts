// Where a forward attention block's tensors start: the (batch, head, row) bases of O and LSE in the
// prologue every forward kernel shares.
import { add, cast, int64, mul, select, type BlockBuilder, type Expr, type VarExpr } from '@tilekit/codegen';

/** Where a (batch, head) slice of a tensor starts, plus a row offset already in elements. */
export interface FmhaFwdBaseSpec {
  readonly batch: Expr;
  readonly batchStride: Expr;
  readonly head: Expr;
  readonly headStride: Expr;
  /** int64 element offset of the block's first row (and split, where there is one). */
  readonly rowOffset: Expr;
}

function baseOffset(s: FmhaFwdBaseSpec): Expr {
  return add(add(mul(cast(s.batch, int64), s.batchStride), mul(cast(s.head, int64), s.headStride)), s.rowOffset);
}

/** `name` = ptr + batch·batchStride + head·headStride + rowOffset (64-bit arithmetic), as a local of ptr's type. */
export function emitFmhaFwdBase(b: BlockBuilder, name: string, ptr: VarExpr, s: FmhaFwdBaseSpec): VarExpr {
  return b.let(name, ptr.type, add(ptr, baseOffset(s)));
}

/** The LSE base as `emitFmhaFwdBase`, except that a null `lse` stays null (the pipelines skip its stores then). */
export function emitFmhaFwdLseBase(b: BlockBuilder, lse: VarExpr, s: FmhaFwdBaseSpec): VarExpr {
  return b.let('lse_base', lse.type, select(lse, add(lse, baseOffset(s)), lse));
}
