// Forward instances whose O is split by columns across two groups of consumer warpgroups (each group
// computes S and the softmax of the same rows and P·V on its half of d_v), beside the dense catalog
// and compiled in CI like it (fmhaFwdCatalog.compile.spec.ts). The split lets d_v pass 256: one
// warpgroup holds a 64 × 256 fp32 slice of O at most.
import { FMHA_FWD_DTYPES, FMHA_FWD_REGISTER_SPLIT, FMHA_FWD_STAGES, FmhaFwdRecomputeSOutputSplit } from '@tilekit/fmha';
import { FMHA_FWD_MASKS } from './fmhaFwdCatalog.ts';
import { FmhaFwdInstance } from '@tilekit/fmha-launch';

/** Head dims (d_qk, d_v) of the split instances: 64 query rows per group, 64 key rows per tile. */
export const FMHA_FWD_OUTPUT_SPLIT_TILES = Object.freeze([
  { headDim: 256, headDimV: 256, tileM: 64, tileN: 64 },
  { headDim: 64, headDimV: 512, tileM: 64, tileN: 64 },
]);

const HALVES = new FmhaFwdRecomputeSOutputSplit(2);

/** One-pass instances of every dtype and mask for each of {@link FMHA_FWD_OUTPUT_SPLIT_TILES}, O in two column halves. */
export const FMHA_FWD_OUTPUT_SPLIT_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FMHA_FWD_OUTPUT_SPLIT_TILES.flatMap((dims) =>
      FMHA_FWD_MASKS.map(
        (mask) =>
          new FmhaFwdInstance({
            dtype,
            ...dims,
            outputSplit: HALVES,
            stages: FMHA_FWD_STAGES,
            ...FMHA_FWD_REGISTER_SPLIT,
            mask,
            splitKv: false,
          }),
      ),
    ),
  ),
);
