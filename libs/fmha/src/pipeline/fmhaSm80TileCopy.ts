import { add, addressOf, cpAsync, index, mul, select, type Expr, type Target } from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import { BlockGemmPolicyError, type WgmmaSmemLayout } from '@tilekit/gemm';
import {
  emitPartitionIndex,
  emitTileWindowAccesses,
  emitXIndex,
  makeVectorLoadEncoding,
  type ThreadScope,
  type TileDistributionEncoding,
  type TileWindow,
} from '@tilekit/tile';

/**
 * The sm_80 pipelines' copy of a [rows, cols] tile from global into XOR-swizzled shared memory
 * (CK-tile's `async_load_tile`): 16-byte `cp.async.cg` of a coalesced vector distribution over the
 * block's warps (`makeVectorLoadEncoding`), offsets and in-bounds predicates from the tile window
 * walk. A vector whose row lies outside the sequence copies 0 source bytes (src-size 0, source
 * clamped to the view's base) and is zero-filled: no reliance on hardware bounds checks. Policy
 * errors are `BlockGemmPolicyError`s naming `owner` (the pipeline).
 */
export class FmhaSm80TileCopy {
  readonly owner: string;
  readonly warps: number;

  constructor(owner: string, warps: number) {
    this.owner = owner;
    this.warps = warps;
  }

  /** The copy distribution of a [rows, cols] tile (`what`: e.g. `Q tile`), 8-element vectors over the block's threads. */
  encoding(what: string, rows: number, cols: number): TileDistributionEncoding {
    try {
      return makeVectorLoadEncoding({ rows, cols, vectorLength: 8, warpSize: 32, numWarps: this.warps });
    } catch (error) {
      throw new BlockGemmPolicyError(
        `${this.owner} ${what}`,
        `${rows}×${cols} must split into 16-byte vectors over ${32 * this.warps} threads`,
        (error as Error).message,
      );
    }
  }

  /**
   * The calling thread's cp.async copies of the tile under `win` (copy distribution `enc`): each
   * 16-byte vector (global offset and in-bounds predicate from the window walk) goes to the swizzled
   * shared offset of its (row, column) from `dst`; src-size 16 inside the sequence, 0 outside.
   */
  emit(t: ThreadScope, target: Target, win: TileWindow, enc: TileDistributionEncoding, layout: WgmmaSmemLayout, dst: Expr): void {
    const b = t.b;
    const ps = emitPartitionIndex(t, enc);
    const view = win.view;
    // [rows, cols] is [MN, K] for Q and K (K-major) and [K, MN] for V (MN-major): the layout takes (mn, k).
    const traits = emitTileWindowAccesses(t, win, enc, ({ offset, pred, ys }) => {
      const xs = emitXIndex(t, enc, ps, ys);
      const mnk = layout.major === 'K' ? xs : [xs[1]!, xs[0]!];
      const { offset: smemOffset } = emitCalculateOffset(b, layout.descriptor, mnk, t.block.indexEmitter);
      const src = addressOf(index(view.pointer, select(pred, offset, 0)));
      b.expr(cpAsync(target, { dst: add(dst, mul(smemOffset, layout.elementBytes)), src, bytes: 16, srcBytes: select(pred, 16, 0) }));
    });
    if (traits.scalarPerVector !== 8 || traits.vectorDimX !== 1) {
      throw new BlockGemmPolicyError(
        `${this.owner} Q/K/V view`,
        'must allow 8-element vectors along the head dim: stride 1, the row stride a multiple of 8',
        `${traits.scalarPerVector} along X${traits.vectorDimX}`,
      );
    }
  }
}
