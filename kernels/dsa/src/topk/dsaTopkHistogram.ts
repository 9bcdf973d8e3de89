// Adding keys to a shared-memory histogram without a branch: one atomic increment per key, an
// inactive key's going to its lane's spare bin. Lanes of a warp that hit one bin are combined by
// the hardware (nvcc emits ATOMS.POPC.INC for the increment), so rows of equal values do not
// serialize: measured on the H200, faster than a warp vote that lets one lane add for all.
import { add, call, cast, int32, select, type BlockBuilder, type Expr } from '@tilekit/codegen';

/** One key as the histogram sees it: whether it counts, and its bin. */
export interface DsaTopkBinItem {
  readonly active: Expr;
  readonly bin: Expr;
}

/**
 * Emits hist[item.bin] += 1 for every active item; an inactive one adds to hist[spare + lane]
 * instead (the caller keeps 32 spare bins after the histogram that no one reads).
 */
export function emitDsaTopkHistogramAdd(b: BlockBuilder, hist: Expr, spare: number, items: readonly DsaTopkBinItem[], lane: Expr): void {
  for (const item of items) {
    const bin = select(item.active, cast(item.bin, int32), add(lane, spare));
    b.expr(call('atomicAdd', [add(hist, bin), 1], int32));
  }
}
