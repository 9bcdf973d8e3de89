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
 * The fewest slices of at most `maxColumns` (default {@link FFPA_MAX_SLICE_COLUMNS}; the sm_80
 * path: 256) columns that cover [0, hdimV), in order, widths multiples of 64 differing by at most
 * 64 (wider first): 512 → [512], 576 → [320, 256], 1024 → [512, 512]; with 256: 576 → [192, 192,
 * 192]. Throws `ArgumentError('hdimV')` unless hdimV is a positive multiple of 64, and
 * `ArgumentError('maxColumns')` unless maxColumns is a positive multiple of 64.
 */
export function ffpaColumnSlices(hdimV: number, maxColumns: number = FFPA_MAX_SLICE_COLUMNS): readonly FfpaColumnSlice[] {
  if (!Number.isInteger(hdimV) || hdimV <= 0 || hdimV % 64 !== 0)
    throw new ArgumentError('hdimV', 'must be a positive multiple of 64 (FFPA splits O in 64-column chunks)', hdimV);
  if (!Number.isInteger(maxColumns) || maxColumns <= 0 || maxColumns % 64 !== 0)
    throw new ArgumentError('maxColumns', 'must be a positive multiple of 64 (whole 64-column chunks of O)', maxColumns);
  const chunks = hdimV / 64;
  const count = Math.ceil(hdimV / maxColumns);
  const slices: FfpaColumnSlice[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const width = 64 * (Math.floor(chunks / count) + (i < chunks % count ? 1 : 0));
    slices.push(Object.freeze({ offset, width }));
    offset += width;
  }
  return Object.freeze(slices);
}
