import { EncodingBuilderError, SliceError } from './errors.ts';
import { splitMixedRadix, TileDistributionEncoding } from './tileDistributionEncoding.ts';

/** What `sliceEncoding` produces: the sub-tile's encoding and the Y sub-box each thread keeps. */
export interface SlicedEncoding {
  readonly encoding: TileDistributionEncoding;
  /** Per Y: the first input Y value kept (CK's `get_y_sliced_thread_data` origins). */
  readonly yOrigins: readonly number[];
  /** Per Y: how many values are kept (= the output encoding's Y lengths). */
  readonly yLengths: readonly number[];
}

/**
 * CK's `slice_distribution_from_x`: the distribution of the sub-tile [xBegins, xEnds) of a
 * distributed tile. Every thread keeps its P; it keeps the Y sub-box [yOrigins, yOrigins + yLengths).
 * The encoding keeps its shape (same R, P and Y lists, same number of digits); only H lengths shrink.
 *
 * Representable iff, per X, the range is a box in digit space that never splits a P-owned digit:
 * with S_m the product of the digits after m, the range is [b, b + l·S_m) with S_m | b, digit m of b
 * plus l at most H_m, and the digits before m fixed (a P-owned digit there must have length 1, and a
 * P-owned digit m must be kept whole). Otherwise `SliceError`.
 *
 * Postcondition (brute-force tested): X_out(P, y) + xBegins = X_in(P, yOrigins + y) for every P and
 * every y inside the output Y lengths, and these are all the (P, Y) whose element lies in the box.
 */
export function sliceEncoding(enc: TileDistributionEncoding, xBegins: readonly number[], xEnds: readonly number[]): SlicedEncoding {
  if (xBegins.length !== enc.ndimX || xEnds.length !== enc.ndimX) {
    throw new EncodingBuilderError(
      'sliceEncoding',
      `xBegins and xEnds need one entry per X dimension (${enc.ndimX})`,
      `${xBegins.length} and ${xEnds.length}`,
    );
  }
  const hs: number[][] = [];
  const origin = new Map<string, number>();
  for (let x = 0; x < enc.ndimX; x++) {
    const b = xBegins[x]!;
    const e = xEnds[x]!;
    if (!Number.isSafeInteger(b) || !Number.isSafeInteger(e) || b < 0 || e <= b || e > enc.xLengths[x]!) {
      throw new EncodingBuilderError('sliceEncoding', `X${x} needs 0 ≤ begin < end ≤ ${enc.xLengths[x]!}`, `[${b}, ${e})`);
    }
    const h = enc.hsLengthss[x]!;
    const n = h.length;
    if (n === 0) {
      hs.push([]);
      continue;
    }
    const len = e - b;
    const suffix = new Array<number>(n);
    let s = 1;
    for (let j = n - 1; j >= 0; j--) {
      suffix[j] = s;
      s *= h[j]!;
    }
    // The deepest digit whose span can hold the range: the candidate "partial" digit m.
    let m = n - 1;
    while (m > 0 && len > h[m]! * suffix[m]!) m--;
    const bDigits = splitMixedRadix(b, h);
    const l = len / suffix[m]!;
    if (!Number.isInteger(l) || b % suffix[m]! !== 0 || bDigits[m]! + l > h[m]!) {
      throw new SliceError(`X${x} range must be a box of its digits (H = (${h.join(', ')}))`, `[${b}, ${e})`);
    }
    const lengths = h.map((hj, j) => (j < m ? 1 : j === m ? l : hj));
    h.forEach((hj, j) => {
      const o = enc.digitOwners[x + 1]![j]!;
      const newLen = lengths[j]!;
      if (o.kind === 'p' && newLen !== hj)
        throw new SliceError(`X${x} digit ${j} (length ${hj}) belongs to P${o.p} and cannot be cut`, `[${b}, ${e})`);
      if (o.kind === 'y') origin.set(`${x}:${j}`, j <= m ? bDigits[j]! : 0);
    });
    hs.push(lengths);
  }
  const encoding = new TileDistributionEncoding({ rs: enc.rsLengths, hs, ps: enc.psToRhs, ys: enc.ysToRhs });
  const yOrigins = enc.ysToRhs.map((r) => origin.get(`${r.major - 1}:${r.minor}`) ?? 0);
  return { encoding, yOrigins, yLengths: encoding.yLengths };
}
