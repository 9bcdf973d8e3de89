// FFPA's sm_90a backward dq_dk_dv instances (FfpaBwdSm90Instance over @tilekit/fmha's
// FmhaBwdWsSplitDPipeline): one per dtype × FFPA head-dim pair (d 320 … 1024, 576/512) × mask kind;
// d up to 512 runs clusters of 2 CTAs, above 512 clusters of 4 (256 columns each); each with dQ
// added as it comes and in key order (deterministic): 2 × 13 × 2 × 2 = 104 instances.
import { sm90a, type Target } from '@tilekit/codegen';
import {
  FMHA_BWD_SPLIT_D_ANY_DQ_ORDER,
  FMHA_BWD_SPLIT_D_KEY_DQ_ORDER,
  FMHA_FWD_DTYPES,
  FmhaBwdWsSplitDPipeline,
  type FmhaBwdWsSplitDDqOrder,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { checkUniqueInstances } from '../checkUniqueInstances.ts';
import { FFPA_MASKS } from '../ffpaCatalog.ts';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';
import { FfpaBwdSm90Instance } from './ffpaBwdSm90Instance.ts';

/**
 * The pipeline shape of every sm_90a catalog instance: column slices of 256 per CTA (128 per
 * consumer warpgroup), two Q/dO stages, 40 registers per producer thread (its dQ warp loops over
 * bulk reductions) and 232 per consumer thread: what the producer gives back at 168 the consumers take.
 */
export const FFPA_BWD_SM90_SHAPE = Object.freeze({
  sliceWidth: 256,
  sliceStages: 2,
  producerRegisters: 40,
  consumerRegisters: 232,
} as const);

/** The dQ orders of the catalog: as it comes (atomic), and in key order (deterministic). */
export const FFPA_BWD_SM90_DQ_ORDERS: readonly FmhaBwdWsSplitDDqOrder[] = Object.freeze([
  FMHA_BWD_SPLIT_D_ANY_DQ_ORDER,
  FMHA_BWD_SPLIT_D_KEY_DQ_ORDER,
]);

/** One sm_90a FFPA backward dq_dk_dv instance for a dtype, (d, d_v), mask kind and dQ order (defaults: as it comes, sm_90a). */
export function ffpaBwdSm90Instance(
  dtype: (typeof FMHA_FWD_DTYPES)[number],
  headDim: number,
  headDimV: number,
  mask: FmhaFwdMaskKind,
  target: Target = sm90a,
  dqOrder: FmhaBwdWsSplitDDqOrder = FMHA_BWD_SPLIT_D_ANY_DQ_ORDER,
): FfpaBwdSm90Instance {
  const pipeline = new FmhaBwdWsSplitDPipeline({ dtype, headDim, headDimV, ...FFPA_BWD_SM90_SHAPE, dqOrder });
  return new FfpaBwdSm90Instance(pipeline, mask, target);
}

/** Every dtype × FFPA_HEAD_DIMS pair × mask kind × dQ order. Postcondition (checked below): names and hashes unique. */
export const FFPA_BWD_SM90_CATALOG: readonly FfpaBwdSm90Instance[] = Object.freeze(
  FFPA_BWD_SM90_DQ_ORDERS.flatMap((order) =>
    FMHA_FWD_DTYPES.flatMap((dtype) =>
      FFPA_HEAD_DIMS.flatMap(({ hdimQ, hdimV }) => FFPA_MASKS.map((mask) => ffpaBwdSm90Instance(dtype, hdimQ, hdimV, mask, sm90a, order))),
    ),
  ),
);

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique in `catalog`. */
export function checkFfpaBwdSm90Catalog(catalog: readonly FfpaBwdSm90Instance[]): void {
  checkUniqueInstances('ffpa sm_90a backward', catalog);
}
checkFfpaBwdSm90Catalog(FFPA_BWD_SM90_CATALOG);
