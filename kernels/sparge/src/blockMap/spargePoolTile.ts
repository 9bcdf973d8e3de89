// The register distribution of Sparge's block-map row kernels (K mean, pooling): a tile of rows ×
// head dim spread over a block so that consecutive lanes read consecutive 16-byte vectors of one row
// (coalesced), a row's lanes are the low lane bits of one warp (a row reduction is a lane
// butterfly), and each thread holds the same columns in every row it owns (a column reduction is
// an in-thread fold, then a butterfly over the high lane bits, then a sum over the warps).
import { ArgumentError } from '@tilekit/numeric';
import { hRef, TileDistributionEncoding } from '@tilekit/tile';

const WARP = 32;

/** What a Sparge row tile is made of. */
export interface SpargePoolTileSpec {
  /** Rows of the tile (a multiple of the rows one pass of the block covers). */
  readonly rows: number;
  /** Columns (the head dim), a multiple of `vectorLength`. */
  readonly cols: number;
  /** Elements per 16-byte vector. */
  readonly vectorLength: number;
  /** Threads per block (whole warps). */
  readonly threads: number;
}

/** A row tile's distribution and the digits the kernels use. */
export interface SpargePoolTile {
  readonly encoding: TileDistributionEncoding;
  readonly rows: number;
  readonly cols: number;
  /** Lanes sharing one row (K0: the low lane bits, a power of two ≤ 32). */
  readonly lanesPerRow: number;
  /** Rows one pass of the whole block covers (warps × 32 / K0). */
  readonly rowsPerPass: number;
  /** Warps of the block. */
  readonly warps: number;
  /** Columns each thread holds (Krep · K1, the same in each of its rows). */
  readonly colsPerThread: number;
}

/**
 * The distribution of a rows × cols tile over `threads`: each row cut into vectors (K1 =
 * vectorLength) over K0 lanes (the largest power of two ≤ 32 dividing cols / K1), repeated Krep
 * times along the row; the 32 / K0 rows of one warp pass (M2) stacked over the warps, the passes
 * repeated M0 = rows / (warps·M2) times. H_M = (M0, warps, M2), H_D = (Krep, K0, K1); P0 (warp) →
 * warps; P1 (lane) → (M2, K0); Y → (M0, Krep, K1).
 * Postcondition (tested): the encoding covers rows × cols exactly once over the threads.
 * @throws ArgumentError for a shape it cannot cover.
 */
export function spargePoolTile(spec: SpargePoolTileSpec): SpargePoolTile {
  const { rows, cols, vectorLength: k1, threads } = spec;
  if (!Number.isSafeInteger(k1) || k1 < 1) throw new ArgumentError('spec.vectorLength', 'must be a positive integer', k1);
  if (!Number.isSafeInteger(cols) || cols < k1 || cols % k1 !== 0)
    throw new ArgumentError('spec.cols', `must be a positive multiple of the vector length ${k1}`, cols);
  if (!Number.isSafeInteger(threads) || threads < WARP || threads % WARP !== 0 || threads > 1024)
    throw new ArgumentError('spec.threads', 'must be a multiple of 32 in [32, 1024]', threads);
  const vectors = cols / k1;
  let k0 = 1;
  while (k0 * 2 <= WARP && vectors % (k0 * 2) === 0) k0 *= 2;
  const krep = vectors / k0;
  const m2 = WARP / k0;
  const warps = threads / WARP;
  const rowsPerPass = warps * m2;
  if (!Number.isSafeInteger(rows) || rows < rowsPerPass || rows % rowsPerPass !== 0)
    throw new ArgumentError(
      'spec.rows',
      `must be a positive multiple of the ${rowsPerPass} rows one pass of ${threads} threads covers`,
      rows,
    );
  const m0 = rows / rowsPerPass;
  const encoding = new TileDistributionEncoding({
    hs: [
      [m0, warps, m2],
      [krep, k0, k1],
    ],
    ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 1)]],
    ys: [hRef(0, 0), hRef(1, 0), hRef(1, 2)],
  });
  return { encoding, rows, cols, lanesPerRow: k0, rowsPerPass, warps, colsPerThread: krep * k1 };
}
