// Finding the threshold bin of a shared histogram on the GPU: thread t owns `bins / threads`
// consecutive bins counted from the top, a block scan gives each thread the count above its bins,
// and the one thread whose bins hold the crossing writes it to the shared state.
import { add, and, cast, index, int32, le, lt, mul, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { emitBlockExclusiveScan, type BlockScanSite } from '@tilekit/tile';

/** Slots of the shared int32 state the selection passes talk through. */
export const DSA_TOPK_STATE = Object.freeze({ bin: 0, above: 1, count: 2, listed: 3 });

/** Slots of the shared state. */
export const DSA_TOPK_STATE_SLOTS = 4;

/** A histogram to search: shared int32 bins (a multiple of the threads) and the count still to select. */
export interface DsaTopkThresholdSearch {
  readonly hist: Expr;
  readonly bins: number;
  /** int32, 1 ≤ remaining; the crossing is found only when remaining ≤ Σ bins. */
  readonly remaining: Expr;
  /** Shared int32 state (DSA_TOPK_STATE). */
  readonly state: Expr;
}

/**
 * Emits the search of dsaThresholdBin: the bin b with above(b) < remaining ≤ above(b) + count(b)
 * goes to state[bin], above(b) to state[above] and count(b) to state[count] (untouched when
 * remaining exceeds the histogram's total). Ends with a barrier, after which the state may be read.
 * Returns the histogram's total (an int32 the same on every thread).
 */
export function emitDsaTopkThresholdBin(b: BlockBuilder, site: BlockScanSite, name: string, s: DsaTopkThresholdSearch): Expr {
  const per = s.bins / site.threads;
  const top = b.let(`${name}_top`, int32, sub(s.bins - 1, mul(site.tid, per)));
  const counts = Array.from({ length: per }, (_, j) => b.let(`${name}_c${j}`, int32, index(s.hist, sub(top, j))));
  const local = counts.reduce((sum, c) => add(sum, c), cast(0, int32) as Expr);
  const scan = emitBlockExclusiveScan(b, site, name, b.let(`${name}_local`, int32, local));
  const above = b.var(`${name}_above`, int32, scan.exclusive);
  counts.forEach((c, j) => {
    b.if(and(lt(above, s.remaining), le(s.remaining, add(above, c))), (x) => {
      x.assign(index(s.state, DSA_TOPK_STATE.bin), sub(top, j));
      x.assign(index(s.state, DSA_TOPK_STATE.above), above);
      x.assign(index(s.state, DSA_TOPK_STATE.count), c);
    });
    b.assign(above, add(above, c));
  });
  b.push(site.target.syncThreads());
  return scan.total;
}
