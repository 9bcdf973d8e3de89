import { add, float32, infinity, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { sweepTile, type BlockEmitter, type DistributedTensor } from '@tilekit/tile';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';

/** Where {@link emitFmhaFwdEdgeMask} masks: the key tile at `j0` of the block's query tile, S in `sAcc`. */
export interface FmhaFwdEdgeMaskTile {
  readonly args: Pick<FmhaFwdTileArgs, 'mask' | 'm0'>;
  /** `int` first key row of the tile. */
  readonly j0: Expr;
  readonly tileM: number;
  readonly tileN: number;
  /** S (tileM × tileN, fp32) in the score GEMM's C distribution. */
  readonly sAcc: DistributedTensor;
  /** The block emitter of the `if` body `mb` (nested under the caller's). */
  readonly threadsOf: (mb: BlockBuilder) => BlockEmitter;
}

/**
 * The mask of S on the key tiles that need it (the mask's `isEdgeTile`): every element the mask
 * drops at (m0 + row, j0 + column) becomes −∞, so the online softmax gives it weight 0.
 */
export function emitFmhaFwdEdgeMask(l: BlockBuilder, tile: FmhaFwdEdgeMaskTile): void {
  const { args, j0, sAcc } = tile;
  l.comment('the mask, on the tiles that need it');
  l.if(args.mask.isEdgeTile(args.m0, j0, tile.tileM, tile.tileN), (mb) => {
    tile.threadsOf(mb).threads((t) =>
      sweepTile(t, sAcc, (e) => {
        e.b.if(args.mask.isMasked(add(args.m0, e.x[0]!), add(j0, e.x[1]!)), (z) =>
          z.assign(e.value, infinity(float32, { negative: true })),
        );
      }),
    );
  });
}
