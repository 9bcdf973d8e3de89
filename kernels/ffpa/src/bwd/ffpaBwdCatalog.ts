// FFPA's backward dq_dk_dv instances (FfpaBwdInstance over @tilekit/fmha's
// FmhaBwdSm80SplitDPipeline): one per dtype × FFPA head-dim pair × mask kind, built for sm_90a.
// Every instance covers all column slices of its (d, d_v) (the slice is blockIdx.x mod slices), so
// the catalog does not grow with the slice count: 2 × 13 × 2 = 52 instances.
import { sm90a, type Target } from '@tilekit/codegen';
import { FMHA_FWD_DTYPES, FmhaBwdSm80SplitDPipeline, type FmhaFwdMaskKind } from '@tilekit/fmha';
import { checkUniqueInstances } from '../checkUniqueInstances.ts';
import { FFPA_MASKS } from '../ffpaCatalog.ts';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';
import { FfpaBwdInstance } from './ffpaBwdInstance.ts';

/**
 * The pipeline shape of every catalog instance: 64 keys × 64 queries per step, column slices of 128
 * (8 warps; dK and dV: 32 fp32 registers per thread each), a 2-slot ring of 24 KiB slots plus the P and dS
 * tiles: 64 KiB + 1 KiB of alignment slack for every d.
 */
export const FFPA_BWD_SHAPE = Object.freeze({ tileM: 64, tileN: 64, sliceWidth: 128, stages: 2 } as const);

/** One FFPA backward dq_dk_dv instance for a dtype, (d, d_v) and mask kind (target default sm_90a). */
export function ffpaBwdInstance(
  dtype: (typeof FMHA_FWD_DTYPES)[number],
  headDim: number,
  headDimV: number,
  mask: FmhaFwdMaskKind,
  target: Target = sm90a,
): FfpaBwdInstance {
  return new FfpaBwdInstance(new FmhaBwdSm80SplitDPipeline({ dtype, headDim, headDimV, ...FFPA_BWD_SHAPE }), mask, target);
}

/** Every dtype × FFPA_HEAD_DIMS pair × mask kind. Postcondition (checked below): names and hashes unique. */
export const FFPA_BWD_CATALOG: readonly FfpaBwdInstance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FFPA_HEAD_DIMS.flatMap(({ hdimQ, hdimV }) => FFPA_MASKS.map((mask) => ffpaBwdInstance(dtype, hdimQ, hdimV, mask))),
  ),
);

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique in `catalog`. */
export function checkFfpaBwdCatalog(catalog: readonly FfpaBwdInstance[]): void {
  checkUniqueInstances('ffpa backward', catalog);
}
checkFfpaBwdCatalog(FFPA_BWD_CATALOG);
