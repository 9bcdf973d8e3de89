import { EncodingBuilderError } from './errors.ts';
import { TileDistributionEncoding, type RhRef } from './tileDistributionEncoding.ts';

/**
 * Reorders the X dimensions: output X j is input X `order[j]` (e.g. `[1, 0]` views a K×N operand as
 * N×K). P, Y and R are untouched, so the same thread holds the same element in the same register.
 * Postcondition (tested): X_out(P, Y)_j = X_in(P, Y)_{order[j]}.
 */
export function permuteEncodingXs(enc: TileDistributionEncoding, order: readonly number[]): TileDistributionEncoding {
  const n = enc.ndimX;
  const inverse = new Array<number>(n).fill(-1);
  if (order.length !== n)
    throw new EncodingBuilderError('permuteEncodingXs order', `must be a permutation of 0..${n - 1}`, `[${order.join(', ')}]`);
  order.forEach((x, j) => {
    if (!Number.isSafeInteger(x) || x < 0 || x >= n || inverse[x] !== -1)
      throw new EncodingBuilderError('permuteEncodingXs order', `must be a permutation of 0..${n - 1}`, `[${order.join(', ')}]`);
    inverse[x] = j;
  });
  const remap = (r: RhRef): RhRef => (r.major === 0 ? r : { major: inverse[r.major - 1]! + 1, minor: r.minor });
  return new TileDistributionEncoding({
    rs: enc.rsLengths,
    hs: order.map((x) => enc.hsLengthss[x]!),
    ps: enc.psToRhs.map((refs) => refs.map(remap)),
    ys: enc.ysToRhs.map(remap),
  });
}
