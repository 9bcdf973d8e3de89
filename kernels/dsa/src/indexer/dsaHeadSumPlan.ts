// How a wgmma accumulator's elements group into (row, query) head sums: the indexer epilogue's plan.
import type { TileDistributionEncoding } from '@tilekit/tile';
import { DsaArgumentError } from '../dsaArgumentError.ts';

/** The per-thread grouping of an accumulator tile [rows][queries · heads] for the ReLU·w head sum. */
export interface DsaHeadSumPlan {
  /** Distinct rows each thread holds (the same count for every thread). */
  readonly rowSlots: number;
  readonly queries: number;
  readonly heads: number;
  /** `groups[slot][query]`: the thread-buffer indices d whose element lies in the slot's row and the query's columns. */
  readonly groups: readonly (readonly (readonly number[])[])[];
  /** Lane xor-masks that reach the other threads holding the same rows (whose partial sums complete a row). */
  readonly shuffleMasks: readonly number[];
}

/**
 * The head-sum plan of `encoding` (an accumulator over [rows, queries · heads], column c = query ·
 * heads + head): thread-buffer element d of every thread sits in the same row slot (the thread's
 * rows in ascending order) and the same query, and the threads that share rows (lane xor the masks)
 * together cover every head of every query exactly once. Checked over all threads at generation
 * time (the wgmma D fragment satisfies it: 2 row slots, quads of lanes).
 * @throws DsaArgumentError when the encoding does not decompose that way.
 */
export function dsaHeadSumPlan(encoding: TileDistributionEncoding, queries: number, heads: number): DsaHeadSumPlan {
  const [rows, cols] = encoding.xLengths;
  if (encoding.ndimX !== 2 || cols !== queries * heads)
    throw new DsaArgumentError('encoding', `must be a 2-d tile [rows, ${queries}·${heads}]`, encoding.xLengths.join('x'));
  const placed = Array.from({ length: encoding.numThreads }, (_, tid) => elementsOf(encoding, tid));
  const reference = placed[0]!.map(({ slot, col }) => ({ slot, query: Math.floor(col / heads) }));
  const rowSlots = Math.max(...reference.map((e) => e.slot)) + 1;
  for (const [tid, elements] of placed.entries()) {
    elements.forEach(({ slot, col }, d) => {
      if (slot !== reference[d]!.slot || Math.floor(col / heads) !== reference[d]!.query)
        throw new DsaArgumentError(
          'encoding',
          'must place element d in the same row slot and query for every thread',
          `thread ${tid}, d ${d}`,
        );
    });
  }
  const shuffleMasks = sharingMasks(placed, rows!);
  checkCoverage(placed, shuffleMasks, heads, queries);
  const groups = Array.from({ length: rowSlots }, (_, slot) =>
    Array.from({ length: queries }, (_, query) => reference.flatMap((e, d) => (e.slot === slot && e.query === query ? [d] : []))),
  );
  return Object.freeze({ rowSlots, queries, heads, groups, shuffleMasks });
}

interface Placed {
  readonly row: number;
  readonly slot: number;
  readonly col: number;
}

function elementsOf(encoding: TileDistributionEncoding, tid: number): Placed[] {
  const ps = encoding.partitionIndexOf(tid);
  const xs = Array.from({ length: encoding.threadBufferSize }, (_, d) => encoding.calculateXIndexFromD(ps, d));
  const rows = [...new Set(xs.map(([r]) => r!))].sort((x, y) => x - y);
  return xs.map(([row, col]) => ({ row: row!, slot: rows.indexOf(row!), col: col! }));
}

/** The xor masks (powers of two below 32) whose partner threads hold exactly the same rows. */
function sharingMasks(placed: readonly Placed[][], rows: number): number[] {
  const rowsOf = (tid: number): string => [...new Set(placed[tid]!.map((e) => e.row))].join(',');
  const masks = [1, 2, 4, 8, 16].filter((m) => placed.every((_, tid) => rowsOf(tid) === rowsOf(tid ^ m)));
  if (masks.length === 0) throw new DsaArgumentError('encoding', `must let lanes share rows of the ${rows}-row tile`, 'no sharing lanes');
  return masks;
}

/** Every (row, query, head) is held by exactly one thread of each sharing group. */
function checkCoverage(placed: readonly Placed[][], masks: readonly number[], heads: number, queries: number): void {
  const span = masks.reduce((acc, m) => acc | m, 0);
  for (let tid = 0; tid < placed.length; tid++) {
    if ((tid & span) !== 0) continue;
    const seen = new Map<number, number>();
    for (let partner = 0; partner <= span; partner++) {
      if ((partner & ~span) !== 0) continue;
      for (const e of placed[tid | partner]!)
        seen.set(e.row * queries * heads + e.col, (seen.get(e.row * queries * heads + e.col) ?? 0) + 1);
    }
    const rows = new Set(placed[tid]!.map((e) => e.row)).size;
    if (seen.size !== rows * queries * heads || [...seen.values()].some((n) => n !== 1))
      throw new DsaArgumentError('encoding', 'must let each sharing group hold every head of its rows exactly once', `thread ${tid}`);
  }
}
