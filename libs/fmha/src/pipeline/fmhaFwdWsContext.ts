import type { Expr, Target, VarExpr } from '@tilekit/codegen';
import type { FmhaFwdKeyTileContext, FmhaFwdKeyTileWalk } from './fmhaFwdKeyTiles.ts';
import type { FmhaFwdWsArgs, FmhaFwdWsPipeline } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsRing } from './fmhaFwdWsRing.ts';

/** What the producer and the consumers of {@link FmhaFwdWsPipeline.emit} share: set up before the roles split. */
export interface FmhaFwdWsContext {
  readonly pipeline: FmhaFwdWsPipeline;
  readonly target: Target;
  readonly args: FmhaFwdWsArgs;
  /** `int` thread index in the block. */
  readonly tid: Expr;
  /** `uint8*` of the 1024-aligned dynamic shared memory, and its `uint32` shared address. */
  readonly smem: Expr;
  readonly smemAddr: Expr;
  readonly ring: FmhaFwdWsRing;
  readonly walk: FmhaFwdKeyTileWalk;
  readonly walkCtx: FmhaFwdKeyTileContext;
  /** `int` key tiles this query tile visits. */
  readonly iters: VarExpr;
}
