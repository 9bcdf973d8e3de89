// The head dims of the FFPA operator: the large ones the dense forward's catalog stops short of.
import type { FmhaFwdHeadDims } from '@tilekit/fmha';

/** The smallest and largest head dim, and the step between them (one 64-column chunk of the head dim). */
export const FFPA_MIN_HEAD_DIM = 320;
export const FFPA_MAX_HEAD_DIM = 1024;
export const FFPA_HEAD_DIM_STEP = 64;

/**
 * The (hdimQ, hdimV) pairs FFPA runs: d = 320 … 1024 in steps of 64 with d_v = d, and MLA's
 * absorbed heads d 576 with d_v 512 (for d 576 the first pair, d_v 576, is the default).
 */
export const FFPA_HEAD_DIMS: FmhaFwdHeadDims = Object.freeze(
  Array.from(
    { length: (FFPA_MAX_HEAD_DIM - FFPA_MIN_HEAD_DIM) / FFPA_HEAD_DIM_STEP + 1 },
    (_, i) => FFPA_MIN_HEAD_DIM + i * FFPA_HEAD_DIM_STEP,
  )
    .flatMap((d) => (d === 576 ? [576, 512] : [d]).map((dv) => ({ hdimQ: d, hdimV: dv })))
    .map((pair) => Object.freeze(pair)),
);
