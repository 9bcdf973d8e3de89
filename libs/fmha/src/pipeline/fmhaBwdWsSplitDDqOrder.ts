// In which order FmhaBwdWsSplitDPipeline's dQ warp adds a query tile's dQ into dq_acc: as it comes
// (TMA bulk reductions from every key tile in any order: fast, not bitwise reproducible), or in key
// order (deterministic: each key tile waits for the earlier key tiles that meet the query tile).
import {
  bulkWaitGroup,
  div,
  fenceProxyAsyncGlobal,
  int32,
  mul,
  pointer,
  releaseAddGlobal,
  sub,
  waitGlobalAtLeast,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';

/** The query tile the dQ warp adds: its query head and first row. */
export interface FmhaBwdWsSplitDDqTile {
  readonly head: Expr;
  readonly i0: Expr;
}

/**
 * A hook of the dQ warp around each query tile's adds: `emitAdds` emits `adds` (the tile's bulk
 * reductions, whether or not this CTA has columns to add, then the stage's release) with what the
 * order needs before and after them. `dqAccumulation` is the unified workspace's accumulation the order needs;
 * `nameTag` goes into the instance name ('' for the default).
 */
export interface FmhaBwdWsSplitDDqOrder {
  readonly dqAccumulation: 'atomic' | 'ordered';
  readonly nameTag: string;
  emitAdds(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, tile: FmhaBwdWsSplitDDqTile, adds: (b: BlockBuilder) => void): void;
}

/** Adds as they come: nothing around the reductions (the workspace's `atomic` accumulation). */
export const FMHA_BWD_SPLIT_D_ANY_DQ_ORDER: FmhaBwdWsSplitDDqOrder = Object.freeze({
  dqAccumulation: 'atomic',
  nameTag: '',
  emitAdds: (b: BlockBuilder, _ctx: FmhaBwdWsSplitDContext, _tile: FmhaBwdWsSplitDDqTile, adds: (b: BlockBuilder) => void) => adds(b),
});

/**
 * Adds in key order (the workspace's `ordered` accumulation, deterministic): the key tiles that
 * meet a query tile are a contiguous run starting at the mask's first key tile of that query tile
 * (`getTileRangeAlongX`), and each CTA of each of them raises the query tile's counter by one once
 * its adds are complete (bulk group waited, async-proxy fence, release add). Key tile j waits until
 * the counter reaches (j − first) · clusterCtas, so every element of dq_acc receives its partials in
 * key order. A key tile only waits on lower key tiles of the same head and batch, i.e. on clusters
 * of lower block index in the grid, which the GPU schedules no later (the order FlashAttention's
 * deterministic backward relies on too).
 */
export const FMHA_BWD_SPLIT_D_KEY_DQ_ORDER: FmhaBwdWsSplitDDqOrder = Object.freeze({
  dqAccumulation: 'ordered',
  nameTag: 'dqord',
  emitAdds(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, tile: FmhaBwdWsSplitDDqTile, adds: (b: BlockBuilder) => void): void {
    const { pipeline: p, args, target } = ctx;
    const first = args.mask.getTileRangeAlongX(tile.i0, p.tileM, p.tileN).start;
    const turn = b.let('dq_turn', int32, mul(div(sub(args.n0, first), p.tileN), p.clusterCtas));
    const counter = counterOf(b, ctx, tile);
    b.comment('key order: wait until every earlier key tile meeting this query tile has added its dQ');
    b.expr(waitGlobalAtLeast(target, counter, turn));
    b.expr(fenceProxyAsyncGlobal(target));
    adds(b);
    b.comment("key order: this CTA's adds complete, then the query tile's counter raised for the next key tile");
    b.expr(bulkWaitGroup(target, 0));
    b.expr(fenceProxyAsyncGlobal(target));
    b.expr(releaseAddGlobal(target, counter, 1));
  },
});

function counterOf(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext, tile: FmhaBwdWsSplitDDqTile): Expr {
  const counter = ctx.args.dqCounter;
  if (counter === undefined)
    throw new BlockGemmPolicyError('FmhaBwdWsSplitDPipeline dqOrder', 'key order needs args.dqCounter (the query tile counters)', 'absent');
  return b.let('dq_counter', pointer(int32), counter(b, tile.head, tile.i0));
}
