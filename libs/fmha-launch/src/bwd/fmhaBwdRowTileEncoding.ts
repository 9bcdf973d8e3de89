// The register distribution of the backward's small row kernels (dot_do_o, convert_dq): a tile of
// rows × head dim spread over a block so that consecutive lanes touch consecutive 16-byte vectors
// of one row — coalesced loads, and a row's lanes adjacent in the warp (a row reduction is a lane
// butterfly).
import { ArgumentError } from '@tilekit/numeric';
import { hRef, TileDistributionEncoding } from '@tilekit/tile';

const WARP = 32;

/** The shape of a row tile: columns, elements per 16-byte vector, threads, and the elements each thread should hold. */
export interface FmhaBwdRowTileSpec {
  /** Columns (the head dim), a multiple of `vectorLength`. */
  readonly cols: number;
  /** Elements per vector access (16 bytes / element size). */
  readonly vectorLength: number;
  /** Threads per block (whole warps). */
  readonly threads: number;
  /** Elements per thread to aim for (rounded to whole rows of vectors); sizes the tile's rows. */
  readonly elementsPerThread: number;
}

/** A row tile's distribution and the digits the kernels need to know. */
export interface FmhaBwdRowTile {
  readonly encoding: TileDistributionEncoding;
  /** Rows of the tile. */
  readonly rows: number;
  /** Lanes sharing one row (a power of two ≤ 32, the lane id's minor digit). */
  readonly lanesPerRow: number;
}

/**
 * The distribution of a rows × cols tile over `threads`: each row cut into vectors (K1 =
 * vectorLength) spread over K0 lanes (the largest power of two ≤ 32 dividing cols / K1), repeated
 * Krep times along the row; the 32 / K0 rows of one warp pass (M2) stacked over the warps, the
 * passes repeated M0 times (M0 = max(1, ⌊elementsPerThread / (Krep·K1)⌋)).
 * H_M = (M0, warps, M2), H_D = (Krep, K0, K1); P0 (warp) → warps; P1 (lane) → (M2, K0); Y → (M0, Krep, K1).
 * Postcondition (tested): the encoding covers rows × cols exactly once over the threads.
 * @throws ArgumentError for a shape it cannot cover (cols not a multiple of the vector, threads not whole warps).
 */
export function fmhaBwdRowTile(spec: FmhaBwdRowTileSpec): FmhaBwdRowTile {
  const { cols, vectorLength: k1, threads, elementsPerThread } = spec;
  if (!Number.isSafeInteger(k1) || k1 < 1) throw new ArgumentError('spec.vectorLength', 'must be a positive integer', k1);
  if (!Number.isSafeInteger(cols) || cols < k1 || cols % k1 !== 0)
    throw new ArgumentError('spec.cols', `must be a positive multiple of the vector length ${k1}`, cols);
  if (!Number.isSafeInteger(threads) || threads < WARP || threads % WARP !== 0 || threads > 1024)
    throw new ArgumentError('spec.threads', 'must be a multiple of 32 in [32, 1024]', threads);
  if (!Number.isSafeInteger(elementsPerThread) || elementsPerThread < 1)
    throw new ArgumentError('spec.elementsPerThread', 'must be a positive integer', elementsPerThread);
  const vectors = cols / k1;
  let k0 = 1;
  while (k0 * 2 <= WARP && vectors % (k0 * 2) === 0) k0 *= 2;
  const krep = vectors / k0;
  const m2 = WARP / k0;
  const warps = threads / WARP;
  const m0 = Math.max(1, Math.floor(elementsPerThread / (krep * k1)));
  const encoding = new TileDistributionEncoding({
    hs: [
      [m0, warps, m2],
      [krep, k0, k1],
    ],
    ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 1)]],
    ys: [hRef(0, 0), hRef(1, 0), hRef(1, 2)],
  });
  return { encoding, rows: m0 * warps * m2, lanesPerRow: k0 };
}
