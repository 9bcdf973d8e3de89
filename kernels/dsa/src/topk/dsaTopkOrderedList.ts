// The position-ordered candidate list of the two-read top-k schedule (DsaTopkTwoReadInstance): a
// sweep appends every tile's listed keys with their positions in position order, or prepends them
// tile by tile from the row's end when the list's size is known (one block scan per tile places
// them, so the list stays sorted by position without atomics), and the final ordered
// compaction runs over the list instead of the row. Shared memory only: no global reads.
import {
  add,
  and,
  assignStmt,
  bitAnd,
  bitOr,
  cast,
  eq,
  gt,
  index,
  int32,
  lt,
  minOf,
  mul,
  ne,
  select,
  shl,
  shr,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitBlockExclusiveScan, type BlockScanSite } from '@tilekit/tile';

/** A position-ordered list in shared memory: entry i is (positions[i], keys[i]). */
export interface DsaTopkOrderedList {
  /** int32 positions, `capacity` of them. */
  readonly positions: Expr;
  /** uint32 keys, `capacity` of them. */
  readonly keys: Expr;
  readonly capacity: number;
}

/** One key a thread offers the list: whether it is listed, the key, its position. */
export interface DsaTopkListItem {
  readonly active: Expr;
  readonly key: Expr;
  readonly pos: Expr;
}

/**
 * Places one tile's active items from list slot `first(total)` on (total: the tile's active items
 * over the block), thread order then item order; returns the total.
 */
function emitTilePlacement(
  b: BlockBuilder,
  site: BlockScanSite,
  list: DsaTopkOrderedList,
  items: readonly DsaTopkListItem[],
  first: (total: Expr) => Expr,
): Expr {
  const flags = items.map((it, i) => b.let(`listed${i}`, int32, select(it.active, 1, 0)));
  const here = b.let(
    'listed_here',
    int32,
    flags.reduce<Expr>((s, f) => add(s, f), cast(0, int32)),
  );
  const scan = emitBlockExclusiveScan(b, site, 'append', here);
  const at = b.var('list_at', int32, add(first(scan.total), scan.exclusive));
  items.forEach((it, i) => {
    b.if(it.active, (x) => {
      x.assign(index(list.positions, at), it.pos);
      x.assign(index(list.keys, at), it.key);
    });
    b.assign(at, add(at, flags[i]!));
  });
  return scan.total;
}

/**
 * Emits one tile's append: this thread's active items (in position order, thread t's before
 * thread t + 1's) go to list[count + (active items of the threads before) …], then `count` (an
 * int32 variable, the same on every thread) grows by the tile's total. One block scan on
 * `site.scratch` (every thread must run it; alternate scratches between back-to-back calls). The
 * caller guarantees the list's final count is ≤ its capacity (no slot is checked).
 */
export function emitDsaTopkOrderedAppend(
  b: BlockBuilder,
  site: BlockScanSite,
  list: DsaTopkOrderedList,
  count: Expr,
  items: readonly DsaTopkListItem[],
): void {
  const total = emitTilePlacement(b, site, list, items, () => count);
  b.assign(count, add(count, total));
}

/**
 * Emits one tile's prepend, for tiles taken from the row's end down (emitDsaTopkRowSweepBackward)
 * into a list whose final size `size` is known: the tile's active items (in position order, as
 * emitDsaTopkOrderedAppend) go just below the `filled` entries already placed at the list's top,
 * to list[size − filled − (the tile's total) + (active items of the threads before) …], then
 * `filled` (an int32 variable, the same on every thread) grows by the tile's total. Once every tile
 * is placed the list is the one the forward appends would build. The caller guarantees the tiles'
 * active items number exactly `size` in all (no slot is checked).
 */
export function emitDsaTopkOrderedPrepend(
  b: BlockBuilder,
  site: BlockScanSite,
  list: DsaTopkOrderedList & { readonly size: Expr },
  filled: Expr,
  items: readonly DsaTopkListItem[],
): void {
  const total = emitTilePlacement(b, site, list, items, (t) => sub(sub(list.size, filled), t));
  b.assign(filled, add(filled, total));
}

/** What the list compaction keeps and where it writes. */
export interface DsaTopkListCompaction {
  /** int32 entries in the list (≤ its capacity). */
  readonly count: Expr;
  /** uint32: every key above it is kept (> 0). */
  readonly threshold: Expr;
  /** int32: how many keys equal to the threshold are kept besides, the lowest positions first. */
  readonly equalTaken: Expr;
  /** int32: kept entries in all (the compaction stops once they are written). */
  readonly selected: Expr;
  /** Entries per thread and tile (consecutive: thread order is list order). */
  readonly perThread: number;
}

/**
 * Emits the ordered compaction over the list (dsaRadixSelectPositions over its entries): tiles of
 * threads · perThread entries, one block scan each counting (above, equal) in two 16-bit fields
 * (perThread · threads < 2^16), scratches alternating; `write(x, slot, pos)` stores a kept
 * position in its slot (kept above before it + min(equal before it, equalTaken)).
 */
export function emitDsaTopkListCompaction(
  b: BlockBuilder,
  site: BlockScanSite,
  list: DsaTopkOrderedList,
  v: DsaTopkListCompaction,
  write: (x: BlockBuilder, slot: Expr, pos: Expr) => void,
): void {
  const per = v.perThread;
  const keptAbove = b.var('list_above', int32, 0);
  const equal = b.var('list_equal', int32, 0);
  const written = b.var('list_written', int32, 0);
  const parity = b.var('list_parity', int32, 0);
  const field = 0xffff;
  b.for(
    { name: 'entry', type: int32, value: 0 },
    (e) => and(lt(e!, v.count), lt(written, v.selected)),
    (e) => assignStmt(e!, cast(site.threads * per, int32), '+='),
    (x, e) => {
      const first = x.let('entry_first', int32, add(e!, mul(site.tid, per)));
      const items = Array.from({ length: per }, (_, j) => {
        const i = x.let(`entry${j}`, int32, add(first, j));
        const valid = x.let(`entry_valid${j}`, int32, select(lt(i, v.count), 1, 0));
        const key = x.let(`entry_key${j}`, uint32, select(ne(valid, 0), index(list.keys, i), cast(0, uint32)));
        const pos = x.let(`entry_pos${j}`, int32, select(ne(valid, 0), index(list.positions, i), 0));
        const above = x.let(`entry_above${j}`, int32, select(gt(key, v.threshold), 1, 0));
        const isEqual = x.let(`entry_equal${j}`, int32, bitAnd(valid, select(eq(key, v.threshold), 1, 0)));
        return { pos, above, isEqual };
      });
      const local = items.map((it) => add(it.above, shl(it.isEqual, 16))).reduce((s, c) => add(s, c));
      const scan = emitBlockExclusiveScan(
        x,
        { ...site, scratch: add(site.scratch, mul(parity, 32)) },
        'kept',
        x.let('kept_here', int32, local),
      );
      const a = x.var('kept_a', int32, add(keptAbove, bitAnd(scan.exclusive, field)));
      const q = x.var('kept_e', int32, add(equal, shr(scan.exclusive, 16)));
      for (const it of items) {
        const kept = bitOr(it.above, bitAnd(it.isEqual, cast(lt(q, v.equalTaken), int32)));
        x.if(ne(kept, 0), (y) => write(y, add(a, minOf(q, v.equalTaken)), it.pos));
        x.assign(a, add(a, it.above));
        x.assign(q, add(q, it.isEqual));
      }
      x.assign(keptAbove, add(keptAbove, bitAnd(scan.total, field)));
      x.assign(equal, add(equal, shr(scan.total, 16)));
      x.assign(written, add(keptAbove, minOf(equal, v.equalTaken)));
      x.assign(parity, sub(1, parity));
    },
  );
}
