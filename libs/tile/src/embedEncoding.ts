import { EncodingBuilderError } from './errors.ts';
import { TileDistributionEncoding, type RhRef } from './tileDistributionEncoding.ts';

/**
 * CK's `make_embed_tile_distribution_encoding(outer, inner)`: the tile `outer ⊗ inner`, e.g. a block
 * tile = a grid of warps (outer) ⊗ a warp tile (inner). Per X, the H list is outer's then inner's
 * (outer more significant); R = outer R ++ inner R; P = outer P ++ inner P and Y = outer Y ++ inner Y,
 * inner references shifted past outer's digits.
 *
 * Postcondition (property-tested by brute force): for outer (p_o, y_o) and inner (p_i, y_i),
 * X(p_o ++ p_i, y_o ++ y_i)_k = X_outer(p_o, y_o)_k · |X_inner,k| + X_inner(p_i, y_i)_k, and the R index
 * is R_outer(p_o) ++ R_inner(p_i).
 */
export function embedEncoding(outer: TileDistributionEncoding, inner: TileDistributionEncoding): TileDistributionEncoding {
  if (outer.ndimX !== inner.ndimX) {
    throw new EncodingBuilderError(
      'embedEncoding',
      'outer and inner encodings must have the same number of X dimensions',
      `${outer.ndimX} and ${inner.ndimX}`,
    );
  }
  const shift = (r: RhRef): RhRef => ({
    major: r.major,
    minor: r.minor + (r.major === 0 ? outer.ndimR : outer.hsLengthss[r.major - 1]!.length),
  });
  return new TileDistributionEncoding({
    rs: [...outer.rsLengths, ...inner.rsLengths],
    hs: outer.hsLengthss.map((h, i) => [...h, ...inner.hsLengthss[i]!]),
    ps: [...outer.psToRhs, ...inner.psToRhs.map((refs) => refs.map(shift))],
    ys: [...outer.ysToRhs, ...inner.ysToRhs.map(shift)],
  });
}
