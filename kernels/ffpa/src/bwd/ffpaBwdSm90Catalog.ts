// FFPA's sm_90a backward dq_dk_dv instances (FfpaBwdSm90Instance over @tilekit/fmha's
// FmhaBwdWsSplitDPipeline): one per dtype × d = d_v ∈ {320, 384, 448, 512} × mask kind. K and V of a
// block's 64 keys stay in shared memory whole, so the head dims stop at 512 (above, the sm_80 path's
// FFPA_BWD_CATALOG runs): 2 × 4 × 2 = 16 instances.
import { sm90a, type Target } from '@tilekit/codegen';
import { FMHA_FWD_DTYPES, FmhaBwdWsSplitDPipeline, type FmhaFwdMaskKind } from '@tilekit/fmha';
import { checkUniqueInstances } from '../checkUniqueInstances.ts';
import { FFPA_MASKS } from '../ffpaCatalog.ts';
import { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';

/** The head dims (d = d_v) of the sm_90a backward. */
export const FFPA_BWD_SM90_HEAD_DIMS: readonly number[] = Object.freeze([320, 384, 448, 512]);

/**
 * The pipeline shape of every sm_90a catalog instance: column slices of 256 (128 per consumer
 * warpgroup), a 2-slot ring for the Q/dO slabs outside the slice, 24 registers per producer thread
 * and 240 per consumer thread.
 */
export const FFPA_BWD_SM90_SHAPE = Object.freeze({ sliceWidth: 256, ringSlabs: 2, producerRegisters: 24, consumerRegisters: 240 } as const);

/** One sm_90a FFPA backward dq_dk_dv instance for a dtype, (d, d_v) and mask kind (target default sm_90a). */
export function ffpaBwdSm90Instance(
  dtype: (typeof FMHA_FWD_DTYPES)[number],
  headDim: number,
  headDimV: number,
  mask: FmhaFwdMaskKind,
  target: Target = sm90a,
): FfpaBwdSm90Instance {
  return new FfpaBwdSm90Instance(new FmhaBwdWsSplitDPipeline({ dtype, headDim, headDimV, ...FFPA_BWD_SM90_SHAPE }), mask, target);
}

/** Every dtype × FFPA_BWD_SM90_HEAD_DIMS × mask kind. Postcondition (checked below): names and hashes unique. */
export const FFPA_BWD_SM90_CATALOG: readonly FfpaBwdSm90Instance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FFPA_BWD_SM90_HEAD_DIMS.flatMap((d) => FFPA_MASKS.map((mask) => ffpaBwdSm90Instance(dtype, d, d, mask))),
  ),
);

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique in `catalog`. */
export function checkFfpaBwdSm90Catalog(catalog: readonly FfpaBwdSm90Instance[]): void {
  checkUniqueInstances('ffpa sm_90a backward', catalog);
}
checkFfpaBwdSm90Catalog(FFPA_BWD_SM90_CATALOG);
