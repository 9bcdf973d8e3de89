// How FFPA splits the columns of O across CTAs: one CTA holds the fp32 accumulators of 64 query rows
// for at most 512 columns (two consumer warpgroups of 256 columns each, sharing P), so a wider d_v
// runs as several CTAs per query tile, each recomputing S for its own columns.
import { ArgumentError } from '@tilekit/numeric';

/** The most columns of O one CTA computes: two consumer warpgroups × 256 fp32 columns of 64 rows (128 KiB of registers). */
export const FFPA_MAX_SLICE_COLUMNS = 512;

/** The columns of one CTA slice of O (and of V): [offset, offset + width), both multiples of 64. */
export interface FfpaColumnSlice {
  readonly offset: number;
  readonly width: number;
}

/**
 * The fewest slices of at most {@link FFPA_MAX_SLICE_COLUMNS} columns that cover [0, hdimV), in
 * order, widths multiples of 64 differing by at most 64 (wider first): 512 → [512], 576 → [320,
 * 256], 1024 → [512, 512]. Throws `ArgumentError('hdimV')` unless hdimV is a positive multiple of 64.
 */
export function ffpaColumnSlices(hdimV: number): readonly FfpaColumnSlice[] {
  if (!Number.isInteger(hdimV) || hdimV <= 0 || hdimV % 64 !== 0)
    throw new ArgumentError('hdimV', 'must be a positive multiple of 64 (FFPA splits O in 64-column chunks)', hdimV);
  const chunks = hdimV / 64;
  const count = Math.ceil(hdimV / FFPA_MAX_SLICE_COLUMNS);
  const slices: FfpaColumnSlice[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const width = 64 * (Math.floor(chunks / count) + (i < chunks % count ? 1 : 0));
    slices.push(Object.freeze({ offset, width }));
    offset += width;
  }
  return Object.freeze(slices);
}
