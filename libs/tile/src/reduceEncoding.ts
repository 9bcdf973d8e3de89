import { EncodingBuilderError } from './errors.ts';
import { rRef, TileDistributionEncoding, type RhRef } from './tileDistributionEncoding.ts';

/** A P-owned digit of a reduced X dimension that became an R digit of the reduced encoding. */
export interface ReducedDigit {
  /** The reduced X dimension (input numbering) and the digit's position in its H list. */
  readonly x: number;
  readonly minor: number;
  readonly length: number;
  /** Its index in the output R list. */
  readonly r: number;
  /** The P dimension that owns it (the lanes or warps a cross-thread reduction runs over). */
  readonly p: number;
}

/** What `reduceEncoding` produces: the encoding plus the maps a reduction needs. */
export interface ReducedEncoding {
  readonly encoding: TileDistributionEncoding;
  /** Input X dims that remain, in order (output X j = input X keptXs[j]). */
  readonly keptXs: readonly number[];
  /** Output Y j = input Y keptYs[j]. */
  readonly keptYs: readonly number[];
  /** Input Ys indexing reduced X dims: the in-thread part of the reduction. */
  readonly reducedYs: readonly number[];
  /** Input P-owned digits of reduced X dims, now R digits: the cross-thread part (CK's `block_tile_reduce_sync`). */
  readonly newRs: readonly ReducedDigit[];
}

/**
 * CK's `make_reduce_tile_distribution_encoding(in, reduceXs)`: the distribution of the result of
 * reducing over the X dims `reduceXs`. They are dropped; their P-owned digits become R digits
 * (appended after the existing R, in X then H order), so threads that differed only in them now hold
 * replicas; their Y-owned digits disappear with their Y dims; remaining references are renumbered.
 *
 * Postcondition (brute-force tested): for every P and input Y, the reduced X index of (P, kept Ys) is
 * the input X index restricted to the kept dims, and the R index is R_in(P) ++ the values of `newRs`.
 */
export function reduceEncoding(enc: TileDistributionEncoding, reduceXs: readonly number[]): ReducedEncoding {
  const drop = new Set<number>();
  for (const x of reduceXs) {
    if (!Number.isSafeInteger(x) || x < 0 || x >= enc.ndimX)
      throw new EncodingBuilderError('reduceEncoding reduceXs', `each entry must be an X dimension in [0, ${enc.ndimX})`, String(x));
    if (drop.has(x)) throw new EncodingBuilderError('reduceEncoding reduceXs', 'entries must be distinct', `[${reduceXs.join(', ')}]`);
    drop.add(x);
  }
  const keptXs = enc.hsLengthss.map((_, i) => i).filter((i) => !drop.has(i));
  if (keptXs.length === 0)
    throw new EncodingBuilderError('reduceEncoding reduceXs', 'at least one X dimension must remain', `[${reduceXs.join(', ')}]`);

  const newRs: ReducedDigit[] = [];
  const newMinorOf = new Map<string, number>();
  for (let x = 0; x < enc.ndimX; x++) {
    if (!drop.has(x)) continue;
    enc.hsLengthss[x]!.forEach((length, minor) => {
      const o = enc.digitOwners[x + 1]![minor]!;
      if (o.kind !== 'p') return;
      const r = enc.ndimR + newRs.length;
      newMinorOf.set(`${x}:${minor}`, r);
      newRs.push({ x, minor, length, r, p: o.p });
    });
  }
  const remap = (ref: RhRef): RhRef => {
    if (ref.major === 0) return ref;
    const x = ref.major - 1;
    if (drop.has(x)) return rRef(newMinorOf.get(`${x}:${ref.minor}`)!);
    return { major: keptXs.indexOf(x) + 1, minor: ref.minor };
  };
  const keptYs: number[] = [];
  const reducedYs: number[] = [];
  enc.ysToRhs.forEach((r, y) => (drop.has(r.major - 1) ? reducedYs : keptYs).push(y));
  const encoding = new TileDistributionEncoding({
    rs: [...enc.rsLengths, ...newRs.map((d) => d.length)],
    hs: keptXs.map((x) => enc.hsLengthss[x]!),
    ps: enc.psToRhs.map((refs) => refs.map(remap)),
    ys: keptYs.map((y) => remap(enc.ysToRhs[y]!)),
  });
  return { encoding, keptXs, keptYs, reducedYs, newRs };
}
