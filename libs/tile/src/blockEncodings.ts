import { embedEncoding } from './embedEncoding.ts';
import { EncodingBuilderError } from './errors.ts';
import { hRef, rRef, TileDistributionEncoding, type RhRef } from './tileDistributionEncoding.ts';

/** How one X dimension of a block tile is spread over a warp grid. */
export interface WarpGridX {
  /** The warp-grid axis whose warps split this X (none: every warp sees all of it). */
  readonly warpAxis?: number;
  /** How many times each warp's sub-tile repeats along this X (a Y dimension); default 1. */
  readonly repeat?: number;
}

/** Arguments of {@link makeWarpGridEncoding}. */
export interface WarpGridSpec {
  /** Warps along each grid axis; the warp id is row-major over the axes (axis 0 most significant). */
  readonly warps: readonly number[];
  /** One entry per X dimension. */
  readonly xs: readonly WarpGridX[];
}

/**
 * The outer encoding of a block tile over a grid of warps (one P: the warp id), to `embedEncoding`
 * with a warp-level encoding (one P: the lane id), as CK's block GEMM does. X i has H = (repeat_i,
 * warps[axis_i]) (or just (repeat_i) without an axis); Y = the repeats in X order; a grid axis that
 * splits no X becomes an R digit (its warps hold replicas: e.g. the A operand over N warps). The warp
 * id merges the axes in order, each through its H or R digit.
 */
export function makeWarpGridEncoding(spec: WarpGridSpec): TileDistributionEncoding {
  const axisOwner = new Array<number>(spec.warps.length).fill(-1);
  spec.warps.forEach((w, a) => {
    if (!Number.isSafeInteger(w) || w < 1)
      throw new EncodingBuilderError('makeWarpGridEncoding warps', `warps[${a}] must be an integer ≥ 1`, String(w));
  });
  if (spec.warps.length === 0) throw new EncodingBuilderError('makeWarpGridEncoding warps', 'the grid needs at least one axis', '[]');
  spec.xs.forEach((x, i) => {
    if (x.warpAxis === undefined) return;
    if (!Number.isSafeInteger(x.warpAxis) || x.warpAxis < 0 || x.warpAxis >= spec.warps.length) {
      throw new EncodingBuilderError(
        'makeWarpGridEncoding xs',
        `xs[${i}].warpAxis must be a grid axis in [0, ${spec.warps.length})`,
        String(x.warpAxis),
      );
    }
    if (axisOwner[x.warpAxis] !== -1)
      throw new EncodingBuilderError(
        'makeWarpGridEncoding xs',
        `grid axis ${x.warpAxis} may split only one X`,
        `X${axisOwner[x.warpAxis]} and X${i}`,
      );
    axisOwner[x.warpAxis] = i;
  });
  const rs: number[] = [];
  const warpRefs: RhRef[] = spec.warps.map((w, a) => {
    const x = axisOwner[a]!;
    if (x >= 0) return hRef(x, 1);
    rs.push(w);
    return rRef(rs.length - 1);
  });
  return new TileDistributionEncoding({
    rs,
    hs: spec.xs.map((x) => (x.warpAxis === undefined ? [x.repeat ?? 1] : [x.repeat ?? 1, spec.warps[x.warpAxis]!])),
    ps: [warpRefs],
    ys: spec.xs.map((_, i) => hRef(i, 0)),
  });
}

/** Arguments of {@link makeVectorLoadEncoding}. */
export interface VectorLoadSpec {
  /** Tile rows (M) and columns (K, the contiguous dimension). */
  readonly rows: number;
  readonly cols: number;
  /** Elements per vector access (e.g. 16 bytes / element size). */
  readonly vectorLength: number;
  /** Lanes per warp: 32 on NVIDIA, 64 on AMD. */
  readonly warpSize: number;
  readonly numWarps: number;
}

/**
 * CK's coalesced 2-D load distribution (`MakeADramTileDistribution` of CK-tile's default GEMM policy,
 * `ops/gemm/pipeline/gemm_pipeline_agmem_bgmem_creg_v1_default_policy.hpp`), built as warps ⊗ warp
 * tile: K1 = vectorLength, K0 = cols / K1 lanes along a row, M2 = warpSize / K0 rows per warp pass,
 * M1 = numWarps, M0 = rows / (M2·M1) repeats. Encoding:
 * H_M = (M0, M1, M2), H_K = (K0, K1); P0 (warp) → M1; P1 (lane) → (M2, K0); Y → (M0, K1).
 * Consecutive lanes read consecutive vectors of a row.
 */
export function makeVectorLoadEncoding(spec: VectorLoadSpec): TileDistributionEncoding {
  const { rows, cols, vectorLength: k1, warpSize, numWarps } = spec;
  for (const [name, v] of Object.entries(spec)) {
    if (!Number.isSafeInteger(v) || v < 1)
      throw new EncodingBuilderError(`makeVectorLoadEncoding ${name}`, 'must be an integer ≥ 1', String(v));
  }
  if (cols % k1 !== 0)
    throw new EncodingBuilderError('makeVectorLoadEncoding', 'cols must be a multiple of vectorLength', `${cols} and ${k1}`);
  const k0 = cols / k1;
  if (warpSize % k0 !== 0)
    throw new EncodingBuilderError(
      'makeVectorLoadEncoding',
      'warpSize must be a multiple of the vectors per row (cols / vectorLength)',
      `${warpSize} and ${k0}`,
    );
  const m2 = warpSize / k0;
  if (rows % (m2 * numWarps) !== 0)
    throw new EncodingBuilderError(
      'makeVectorLoadEncoding',
      'rows must be a multiple of (rows per warp pass) × numWarps',
      `${rows} and ${m2} × ${numWarps}`,
    );
  const m0 = rows / (m2 * numWarps);
  const outer = new TileDistributionEncoding({ hs: [[m0, numWarps], []], ps: [[hRef(0, 1)]], ys: [hRef(0, 0)] });
  const inner = new TileDistributionEncoding({ hs: [[m2], [k0, k1]], ps: [[hRef(0, 0), hRef(1, 0)]], ys: [hRef(1, 1)] });
  return embedEncoding(outer, inner);
}
