import { TileEmitError } from './errors.ts';
import { joinMixedRadix, splitMixedRadix } from './tileDistributionEncoding.ts';

/**
 * CK's `space_filling_curve` over a box of Y lengths visited in chunks of `scalarsPerAccess` (one
 * vector access covers that many consecutive values of each dim; 1 except on the vector dim). Dim
 * order is Y0 … Y_{n−1} (last fastest). With `snake` (CK's default), every dim after the first
 * reverses direction when the row-major number of the access digits before it is odd, so
 * consecutive accesses differ by one step in exactly one dim (the tests check this) and moving a
 * coordinate between them is a single small move.
 *
 * Returns the starting Y index of each access, in visiting order; together they tile the box.
 */
export function spaceFillingCurve(lengths: readonly number[], scalarsPerAccess: readonly number[], snake = true): number[][] {
  if (lengths.length !== scalarsPerAccess.length)
    throw new TileEmitError(
      'spaceFillingCurve',
      'lengths and scalarsPerAccess need the same number of dims',
      `${lengths.length} and ${scalarsPerAccess.length}`,
    );
  const access = lengths.map((l, i) => {
    const s = scalarsPerAccess[i]!;
    if (!Number.isSafeInteger(s) || s < 1 || l % s !== 0)
      throw new TileEmitError('spaceFillingCurve scalarsPerAccess', `entry ${i} must divide the length ${l}`, String(s));
    return l / s;
  });
  const count = access.reduce((a, b) => a * b, 1);
  const out: number[][] = [];
  for (let k = 0; k < count; k++) {
    const idx = splitMixedRadix(k, access);
    out.push(
      idx.map((v, i) => {
        const forward = !snake || i === 0 || joinMixedRadix(idx.slice(0, i), access.slice(0, i)) % 2 === 0;
        return (forward ? v : access[i]! - 1 - v) * scalarsPerAccess[i]!;
      }),
    );
  }
  return out;
}
