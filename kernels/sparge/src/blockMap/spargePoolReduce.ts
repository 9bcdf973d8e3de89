// The reductions Sparge's row kernels share, on top of a `spargePoolTile` distribution: the column
// tile (each thread's columns), a lane butterfly, and the per-warp column rows that go through
// shared memory so that a fixed set of threads can sum them in warp order (deterministic: the same
// order on every run, no atomics).
import { add, div, ge, index, int32, lt, mod, and, mul, type CType, type Expr, type Target, type VarExpr } from '@tilekit/codegen';
import {
  makeDistributedTensor,
  reduceEncoding,
  sweepTile,
  type BlockEmitter,
  type DistributedTensor,
  type ReduceOp,
  type ReducedEncoding,
  type ThreadScope,
} from '@tilekit/tile';
import type { SpargePoolTile } from './spargePoolTile.ts';

/** The column distribution of a tile: its encoding reduced over the rows (each thread: its `colsPerThread` columns). */
export function spargeColumnEncoding(tile: SpargePoolTile): ReducedEncoding {
  return reduceEncoding(tile.encoding, [0]);
}

/** The thread-buffer index, in the column tile, of the tile's element `d` (the same column). */
export function spargeColumnIndexOf(tile: SpargePoolTile, columns: ReducedEncoding, d: number): number {
  const ys = tile.encoding.calculateYIndex(d);
  return columns.encoding.calculateD(columns.keptYs.map((y) => ys[y]!));
}

/** A new column tile (registers for the calling thread's columns) of `type`. */
export function makeSpargeColumnTile(block: BlockEmitter, name: string, tile: SpargePoolTile, type: CType): DistributedTensor {
  return makeDistributedTensor(block, name, spargeColumnEncoding(tile).encoding, type);
}

/**
 * `value = op(value, shfl_xor(value, m))` for m = `from`, 2·`from`, … < `to`: afterwards every lane
 * holds `op` over the lanes that differ from it only in those lane bits.
 */
export function emitLaneButterfly(t: ThreadScope, target: Target, value: Expr, from: number, to: number, op: ReduceOp): void {
  for (let mask = from; mask < to; mask *= 2) {
    const other = t.b.let('other', value.type, target.shflXor(value, mask));
    t.b.assign(value, op.combine(value, other));
  }
}

/** The calling thread's warp and lane (`int`). */
export function emitWarpLane(t: ThreadScope): { readonly warp: Expr; readonly lane: Expr } {
  const w = t.block.warpSize;
  return { warp: t.b.let('warp', int32, div(t.tid, w)), lane: t.b.let('lane', int32, mod(t.tid, w)) };
}

/** Visits every register of a column tile with its column (the tile's X index). */
export function sweepColumns(t: ThreadScope, columns: DistributedTensor, visit: (column: Expr, value: Expr) => void): void {
  sweepTile(t, columns, (e) => visit(e.x[0]!, e.value));
}

/**
 * Column partials → one row per warp in shared memory: each column tile is summed (`op`) over the
 * warp's rows by a butterfly over the lane bits above the row's K0 lanes; then the lanes of the
 * warp's first row (lane < K0) store it at `smem[i][warp · cols + column]`. No barrier: the caller
 * synchronizes before reading.
 */
export function emitWarpColumnRows(
  t: ThreadScope,
  tile: SpargePoolTile,
  columns: readonly DistributedTensor[],
  smem: readonly VarExpr[],
  op: ReduceOp,
): void {
  const { warp, lane } = emitWarpLane(t);
  for (const col of columns) {
    for (let d = 0; d < col.size; d++) emitLaneButterfly(t, t.block.target, col.at(t, d), tile.lanesPerRow, t.block.warpSize, op);
  }
  t.b.if(lt(lane, tile.lanesPerRow), (w) => {
    const scope = { ...t, b: w };
    columns.forEach((col, i) =>
      sweepColumns(scope, col, (column, value) => w.assign(index(smem[i]!, add(mul(warp, tile.cols), column)), value)),
    );
  });
}

/** `op` over w = 0 … warps − 1, in that order, of `smem[w · cols + column]`: the fixed combining order. */
export function sumWarpRows(t: ThreadScope, smem: VarExpr, warps: number, cols: number, column: Expr, op: ReduceOp): Expr {
  let acc: Expr = index(smem, column);
  for (let w = 1; w < warps; w++) acc = op.combine(acc, index(smem, add(w * cols, column)));
  return t.b.let('warp_sum', acc.type, acc);
}

/** `lo ≤ tid < hi`. */
export function tidIn(t: ThreadScope, lo: number, hi: number): Expr {
  return and(ge(t.tid, lo), lt(t.tid, hi));
}
