// dQ partials into dq_acc four columns at a time: the wgmma accumulator's lane pairs swap halves
// so each thread holds four adjacent columns of one row, added with one red.global.add.v4.f32.
import {
  add,
  and,
  bitAnd,
  bool,
  float32,
  int32,
  lt,
  mul,
  ne,
  select,
  sub,
  reduceAddF32x4,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { sweepTile, type BlockEmitter, type DistributedTensor } from '@tilekit/tile';

/** Where a tile of dQ goes: dq_acc's row 0 (`float*`, rows of `rowFloats`), the tile's first row and column, and the bounds. */
export interface DqReduceTarget {
  readonly dqRow: Expr;
  readonly rowFloats: number;
  readonly row0: Expr;
  readonly col0: Expr;
  /** Rows below `rows` (`int`) and columns below `cols` are added; `cols` a multiple of 4. */
  readonly rows: Expr;
  readonly cols: number;
}

/**
 * Adds `acc` (a wgmma m64nN f32 accumulator: register d of a lane holds row 8·((d / 2) mod 2) + …,
 * column 8·⌊d / 4⌋ + 2·(lane mod 4) + d mod 2, so registers 4g … 4g + 3 are two columns of rows r
 * and r + 8) into dq_acc with `red.global.add.v4.f32`: lanes 2j and 2j + 1 swap a pair over a
 * shuffle, the even lane then holding columns c … c + 3 of row r, the odd one those of row r + 8.
 * A quarter of the reduction operations of one `red.global.add.f32` per element; every lane
 * shuffles (the bounds predicate only the adds). `tid` is the thread's index (its lane parity).
 */
export function emitDqReduceQuads(
  b: BlockBuilder,
  inner: BlockEmitter,
  target: Target,
  acc: DistributedTensor,
  tid: Expr,
  to: DqReduceTarget,
): void {
  const odd = b.let('dq_odd', bool, ne(bitAnd(tid, 1), 0));
  inner.threads((t) =>
    sweepTile(t, acc, (e) => {
      if (e.d % 4 !== 0) return;
      const a = [0, 1, 2, 3].map((i) => acc.at(t, e.d + i)) as [Expr, Expr, Expr, Expr];
      const r0 = e.b.let('dq_swap0', float32, target.shflXor(select(odd, a[0], a[2]), 1));
      const r1 = e.b.let('dq_swap1', float32, target.shflXor(select(odd, a[1], a[3]), 1));
      const row = e.b.let('dq_row', int32, add(to.row0, select(odd, add(e.x[0]!, 8), e.x[0]!)));
      const col = e.b.let('dq_col', int32, add(to.col0, select(odd, sub(e.x[1]!, 2), e.x[1]!)));
      const v: [Expr, Expr, Expr, Expr] = [select(odd, r0, a[0]), select(odd, r1, a[1]), select(odd, a[2], r0), select(odd, a[3], r1)];
      e.b.if(and(lt(row, to.rows), lt(col, to.cols)), (s) =>
        s.expr(reduceAddF32x4(target, add(to.dqRow, add(mul(row, to.rowFloats), col)), v)),
      );
    }),
  );
}
