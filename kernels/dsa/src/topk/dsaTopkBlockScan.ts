// A block-wide exclusive prefix sum (one value per thread, in thread order) with one barrier: a
// warp scan by shuffles, the warp totals through shared memory, then every warp scans the totals.
import { add, bitAnd, eq, gt, lt, index, select, shr, sub, type BlockBuilder, type Expr, type Target } from '@tilekit/codegen';

/** What the block scan gives every thread. */
export interface DsaTopkBlockScan {
  /** Σ of the values of the threads before this one (0 for thread 0). */
  readonly exclusive: Expr;
  /** Σ over the block (the same on every thread). */
  readonly total: Expr;
}

/** Where a block scan runs: the block's threads (whole warps, ≤ 32 warps), this thread's index and a shared scratch of 32 values. */
export interface DsaTopkScanSite {
  readonly target: Target;
  readonly threads: number;
  readonly tid: Expr;
  readonly scratch: Expr;
}

function warpInclusive(b: BlockBuilder, t: Target, name: string, value: Expr, lane: Expr, width: number): Expr {
  const incl = b.var(name, value.type, value);
  for (let o = 1; o < width; o *= 2) {
    const up = b.let(`${name}_up`, value.type, t.shflUp(incl, o));
    b.if(lt(o - 1, lane), (x) => x.assign(incl, add(incl, up)));
  }
  return incl;
}

/**
 * Emits an exclusive scan of `value` (an integer, one per thread) over the block, with one barrier
 * (every thread must reach it). Every thread reads the scratch after it: the scratch may be written
 * again only after a later barrier (alternate two scratches between back-to-back scans).
 */
export function emitDsaTopkBlockScan(b: BlockBuilder, site: DsaTopkScanSite, name: string, value: Expr): DsaTopkBlockScan {
  const t = site.target;
  const warp = t.warpSize!;
  const warps = site.threads / warp;
  const lane = b.let(`${name}_lane`, site.tid.type, bitAnd(site.tid, warp - 1));
  const warpId = b.let(`${name}_warp`, site.tid.type, shr(site.tid, Math.log2(warp)));
  const incl = warpInclusive(b, t, `${name}_incl`, value, lane, warp);
  b.if(eq(lane, warp - 1), (x) => x.assign(index(site.scratch, warpId), incl));
  b.push(t.syncThreads());
  const totals = warpInclusive(b, t, `${name}_w`, select(lt(lane, warps), index(site.scratch, lane), 0), lane, warps);
  const before = b.let(`${name}_before`, value.type, t.shfl(totals, select(gt(warpId, 0), sub(warpId, 1), 0)));
  const exclusive = b.let(`${name}_excl`, value.type, add(select(gt(warpId, 0), before, 0), sub(incl, value)));
  const total = b.let(`${name}_total`, value.type, t.shfl(totals, warps - 1));
  return { exclusive, total };
}
