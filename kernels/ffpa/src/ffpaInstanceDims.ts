// The (d, slice width) pairs FFPA's instances are built for: every head-dim pair of FFPA_HEAD_DIMS
// with d_v cut into the column slices one CTA computes (ffpaColumnSlices).
import { FFPA_MAX_SLICE_COLUMNS, ffpaColumnSlices } from './ffpaColumnSlices.ts';
import { FFPA_HEAD_DIMS } from './ffpaHeadDims.ts';

/** The head dims of one instance: d_qk and the width of the column slice of V and O it computes. */
export interface FfpaInstanceDims {
  readonly headDim: number;
  readonly headDimV: number;
}

/**
 * Every (d_qk, slice width) an FFPA problem needs with slices of at most `maxColumns` (default
 * {@link FFPA_MAX_SLICE_COLUMNS}): each head-dim pair's column slices, deduplicated, in order; frozen.
 */
export function ffpaInstanceDims(maxColumns: number = FFPA_MAX_SLICE_COLUMNS): readonly FfpaInstanceDims[] {
  const keys = new Set(FFPA_HEAD_DIMS.flatMap((p) => ffpaColumnSlices(p.hdimV, maxColumns).map((s) => `${p.hdimQ}:${s.width}`)));
  return Object.freeze(
    [...keys].map((key) => {
      const [headDim, headDimV] = key.split(':').map(Number);
      return Object.freeze({ headDim: headDim!, headDimV: headDimV! });
    }),
  );
}
