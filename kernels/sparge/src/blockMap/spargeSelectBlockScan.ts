// A block-wide exclusive prefix sum for the selection kernel: each thread contributes one value
// (its chunk's sum); a warp scan by shuffles, the warp totals through shared memory, a second warp
// scan over them. Used for the cdf (cumulative softmax mass) and for the LUT positions.
import { add, bitAnd, eq, ge, index, lt, select, shr, sub, type BlockBuilder, type Expr, type Target } from '@tilekit/codegen';

/** What the block scan gives every thread. */
export interface SpargeBlockScan {
  /** Σ of the values of the threads before this one (0 for thread 0). */
  readonly exclusive: Expr;
  /** Σ over the whole block (the same on every thread). */
  readonly total: Expr;
}

/**
 * Emits an exclusive block scan of `value` (int or float, one per thread) over `threads` threads
 * (whole warps, ≤ 32 warps), using `scratch` (shared memory, ≥ threads/32 entries of the value's
 * type). Contains three barriers; the last one makes `scratch` free for reuse. Every thread must
 * reach it. Floats: the exclusive sum adds the same partial sums on every run (no atomics), so it
 * is reproducible.
 */
export function emitSpargeBlockScan(
  b: BlockBuilder,
  t: Target,
  name: string,
  value: Expr,
  threads: number,
  tid: Expr,
  scratch: Expr,
): SpargeBlockScan {
  const warp = t.warpSize!;
  const warps = threads / warp;
  const lane = b.let(`${name}_lane`, tid.type, bitAnd(tid, warp - 1));
  const warpId = b.let(`${name}_warp`, tid.type, shr(tid, Math.log2(warp)));
  const incl = b.var(`${name}_incl`, value.type, value);
  for (let o = 1; o < warp; o *= 2) {
    const up = b.let(`${name}_up`, value.type, t.shflUp(incl, o));
    b.if(ge(lane, o), (x) => x.assign(incl, add(incl, up)));
  }
  // The lane before's inclusive sum (lane 0: nothing) keeps the float sum free of a subtraction.
  const before = b.let(`${name}_before`, value.type, t.shflUp(incl, 1));
  const inWarp = b.let(`${name}_in_warp`, value.type, select(eq(lane, 0), 0, before));
  b.if(eq(lane, warp - 1), (x) => x.assign(index(scratch, warpId), incl));
  b.push(t.syncThreads());
  b.if(eq(warpId, 0), (x) => {
    const w = x.var(`${name}_w`, value.type, select(lt(lane, warps), index(scratch, lane), 0));
    for (let o = 1; o < warps; o *= 2) {
      const up = x.let(`${name}_wup`, value.type, t.shflUp(w, o));
      x.if(ge(lane, o), (y) => y.assign(w, add(w, up)));
    }
    x.if(lt(lane, warps), (y) => y.assign(index(scratch, lane), w));
  });
  b.push(t.syncThreads());
  const exclusive = b.let(`${name}_excl`, value.type, add(select(ge(warpId, 1), index(scratch, sub(warpId, 1)), 0), inWarp));
  const total = b.let(`${name}_total`, value.type, index(scratch, warps - 1));
  b.push(t.syncThreads());
  return { exclusive, total };
}
