// A block-wide exclusive prefix sum (CK-tile's block scan): one value per thread, in thread order.
// A warp scan by shuffles, the warp totals through shared memory, then a scan of the totals.
import {
  add,
  bitAnd,
  eq,
  ge,
  gt,
  index,
  isIntegral,
  lt,
  select,
  shr,
  sub,
  typeToString,
  type BlockBuilder,
  type CType,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { TileEmitError } from './errors.ts';

/** What a block scan gives every thread. */
export interface BlockScan {
  /** Σ of the values of the threads before this one (0 for thread 0). */
  readonly exclusive: Expr;
  /** Σ over the block (the same on every thread). */
  readonly total: Expr;
}

/**
 * Where a block scan runs: the block's `threads` (whole warps, no more warps than a warp has lanes), this
 * thread's index `tid` and a shared-memory `scratch` of at least `threads / warpSize` values of the
 * scanned type.
 */
export interface BlockScanSite {
  readonly target: Target;
  readonly threads: number;
  readonly tid: Expr;
  readonly scratch: Expr;
}

/**
 * How a block scan combines the warp totals.
 *
 * - `oneBarrier`: every warp scans the warp totals itself (shuffles) and reads its offset and the
 *   block total by shuffle; the exclusive sum is the inclusive one minus the value, so integers
 *   only. One barrier; the scratch is still read after it, so it may be written again only after a
 *   later barrier (alternate two scratches between back-to-back scans).
 * - `threeBarrier`: the first warp scans the warp totals into the scratch; the exclusive sum is the
 *   previous lane's inclusive sum plus the previous warps' total (no subtraction), so integers or
 *   floats, and float sums are the same partial sums on every run. Three barriers; the last one
 *   frees the scratch for reuse.
 *
 * The two also keep their own spelling of the lane guards (`lane > o - 1` and `lane >= o`) and of
 * the shuffled temporaries: the kernels built on them publish their emitted sources, which must not
 * change.
 */
export type BlockScanVariant = 'oneBarrier' | 'threeBarrier';

/** Options of {@link emitBlockExclusiveScan}. */
export interface BlockScanOptions {
  /** How the warp totals are combined (default `oneBarrier`). */
  readonly variant?: BlockScanVariant;
}

/** An inclusive warp scan's variable: its name and type, the name of its shuffled values, and how it guards its additions. */
interface WarpScanSpelling {
  readonly name: string;
  readonly type: CType;
  readonly up: string;
  readonly guard: (lane: Expr, offset: number) => Expr;
}

/** An inclusive Hillis–Steele scan of `value` over the first `width` lanes of each warp, into a new variable. */
function emitWarpInclusiveScan(b: BlockBuilder, t: Target, value: Expr, lane: Expr, width: number, spelling: WarpScanSpelling): Expr {
  const incl = b.var(spelling.name, spelling.type, value);
  for (let o = 1; o < width; o *= 2) {
    const up = b.let(spelling.up, spelling.type, t.shflUp(incl, o));
    b.if(spelling.guard(lane, o), (x) => x.assign(incl, add(incl, up)));
  }
  return incl;
}

const laneAfter = (lane: Expr, o: number): Expr => lt(o - 1, lane);
const laneFrom = (lane: Expr, o: number): Expr => ge(lane, o);

/**
 * Emits an exclusive scan of `value` (one per thread, in thread order) over the block of `site`,
 * naming its variables `${name}_…`. Every thread of the block must reach it (it contains barriers;
 * see {@link BlockScanVariant} for how many and when the scratch is free again). Returns this
 * thread's exclusive sum and the block total. `value` is read more than once: pass a variable.
 */
export function emitBlockExclusiveScan(
  b: BlockBuilder,
  site: BlockScanSite,
  name: string,
  value: Expr,
  options: BlockScanOptions = {},
): BlockScan {
  const t = site.target;
  const type = value.type;
  const variant = options.variant ?? 'oneBarrier';
  const warp = t.warpSize;
  if (warp === null) throw new TileEmitError('emitBlockExclusiveScan', 'the target must have warps', t.name);
  const warps = site.threads / warp;
  if (!Number.isInteger(warps) || warps < 1 || warps > warp)
    throw new TileEmitError('emitBlockExclusiveScan', `threads must be whole warps, at most ${warp} of them`, String(site.threads));
  if (variant === 'oneBarrier' && !isIntegral(type))
    throw new TileEmitError(
      'emitBlockExclusiveScan',
      'the oneBarrier variant scans integers (use threeBarrier for floats)',
      typeToString(type),
    );
  const lane = b.let(`${name}_lane`, site.tid.type, bitAnd(site.tid, warp - 1));
  const warpId = b.let(`${name}_warp`, site.tid.type, shr(site.tid, Math.log2(warp)));
  const totals = select(lt(lane, warps), index(site.scratch, lane), 0);
  if (variant === 'oneBarrier') {
    const incl = emitWarpInclusiveScan(b, t, value, lane, warp, { name: `${name}_incl`, type, up: `${name}_incl_up`, guard: laneAfter });
    b.if(eq(lane, warp - 1), (x) => x.assign(index(site.scratch, warpId), incl));
    b.push(t.syncThreads());
    const scanned = emitWarpInclusiveScan(b, t, totals, lane, warps, {
      name: `${name}_w`,
      type: totals.type,
      up: `${name}_w_up`,
      guard: laneAfter,
    });
    const before = b.let(`${name}_before`, type, t.shfl(scanned, select(gt(warpId, 0), sub(warpId, 1), 0)));
    const exclusive = b.let(`${name}_excl`, type, add(select(gt(warpId, 0), before, 0), sub(incl, value)));
    const total = b.let(`${name}_total`, type, t.shfl(scanned, warps - 1));
    return { exclusive, total };
  }
  const incl = emitWarpInclusiveScan(b, t, value, lane, warp, { name: `${name}_incl`, type, up: `${name}_up`, guard: laneFrom });
  // The lane before's inclusive sum (lane 0: nothing) keeps the float sum free of a subtraction.
  const before = b.let(`${name}_before`, type, t.shflUp(incl, 1));
  const inWarp = b.let(`${name}_in_warp`, type, select(eq(lane, 0), 0, before));
  b.if(eq(lane, warp - 1), (x) => x.assign(index(site.scratch, warpId), incl));
  b.push(t.syncThreads());
  b.if(eq(warpId, 0), (x) => {
    const scanned = emitWarpInclusiveScan(x, t, totals, lane, warps, { name: `${name}_w`, type, up: `${name}_wup`, guard: laneFrom });
    x.if(lt(lane, warps), (y) => y.assign(index(site.scratch, lane), scanned));
  });
  b.push(t.syncThreads());
  const exclusive = b.let(`${name}_excl`, type, add(select(ge(warpId, 1), index(site.scratch, sub(warpId, 1)), 0), inWarp));
  const total = b.let(`${name}_total`, type, index(site.scratch, warps - 1));
  b.push(t.syncThreads());
  return { exclusive, total };
}
