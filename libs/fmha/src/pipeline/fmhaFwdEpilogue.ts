// The end of every forward pipeline's query tile, whatever ran its key loop: the softmax turns the
// accumulated O into the attention output (and the row LSE), O goes out through a predicated tile
// window, and one lane of the lanes sharing a row writes its LSE.
import { add, and, bitAnd, eq, index, int32, lt, ne, select, type Expr } from '@tilekit/codegen';
import {
  makeTileWindow,
  storeTile,
  sweepTile,
  type BlockEmitter,
  type DistributedTensor,
  type TileDistributionEncoding,
} from '@tilekit/tile';
import type { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';

/** Where the epilogue writes O: the [tileM, headDimV] tile of the block, in the O accumulator's distribution. */
export interface FmhaFwdEpilogueTile {
  readonly tileM: number;
  /** O columns this thread's accumulator holds (all of d_v, or one slice of an output split). */
  readonly headDimV: number;
  /** `int` first O column of the tile (default 0: all of O's columns). */
  readonly column0?: Expr;
  /** `bool`: whether this thread's group writes the LSE (default: every group; with an output split, one group). */
  readonly writesLse?: Expr;
  /** The O accumulator's (the P·V GEMM's C) distribution. */
  readonly oEncoding: TileDistributionEncoding;
}

/**
 * Emits the forward epilogue on `block`'s threads: `softmax.emitFinalize` scales `oAcc` by 1/l
 * (0 for rows with nothing unmasked), the tile is stored to `args.o` at rows [m0, m0 + tileM)
 * (predicated on the sequence), and where `args.lse` is given and not null, the lane of each row
 * whose replica bits (the softmax's lane masks) are zero writes LSE[row] for rows below seqlenQ.
 */
export function emitFmhaFwdEpilogue(
  block: BlockEmitter,
  softmax: BlockOnlineSoftmax,
  oAcc: DistributedTensor,
  args: FmhaFwdTileArgs,
  tile: FmhaFwdEpilogueTile,
): void {
  const w = makeTileWindow(block, {
    view: args.o,
    lengths: [tile.tileM, tile.headDimV],
    origin: [args.m0, tile.column0 ?? 0],
    encoding: tile.oEncoding,
    originAlignment: [tile.tileM, tile.headDimV],
  });
  block.threads((t) => {
    const lse = softmax.emitFinalize(t, oAcc, { lse: args.lse !== undefined });
    storeTile(t, w, oAcc);
    if (args.lse !== undefined && lse !== undefined) {
      const lseOut = args.lse;
      // One lane of the lanes that share a row writes its LSE.
      const replicaBits = softmax.laneMasks.reduce((a, m) => a | m, 0);
      sweepTile(t, lse, (e) => {
        const row = e.b.let('lse_row', int32, add(args.m0, e.x[0]!));
        const writes = and(and(ne(select(lseOut, 1, 0), 0), eq(bitAnd(t.tid, replicaBits), 0)), lt(row, args.seqlenQ));
        e.b.if(tile.writesLse === undefined ? writes : and(tile.writesLse, writes), (st) => st.assign(index(lseOut, row), e.value));
      });
    }
  });
}
