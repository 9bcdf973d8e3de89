// FFPA's sm_80 instances: FFPA level L1 (FmhaFwdSm80SplitDPipeline: Q·Kᵀ and P·V tiled along the
// head dim through a cp.async ring, ldmatrix + mma.sync, O in fp32 registers; shared memory does
// not grow with d) as the main loop of @tilekit/fmha-launch's sm_80 instance, named
// `ffpa_fwd_sm80_…`. O stays in registers (d_v / 2 per thread), so a CTA computes at most 256
// columns of O: wider d_v runs as column slices across CTAs that each recompute S
// (ffpaColumnSlices with 256 columns at most). Built for sm_90a (they run on Hopper).
import { sm90a, type Target } from '@tilekit/codegen';
import { FMHA_FWD_DTYPES, FmhaFwdSm80SplitDPipeline, type FmhaFwdMaskKind } from '@tilekit/fmha';
import { FmhaFwdSm80LoopInstance, type FmhaFwdInstanceHeader } from '@tilekit/fmha-launch';
import { checkUniqueInstances } from '../checkUniqueInstances.ts';
import { FFPA_MASKS } from '../ffpaCatalog.ts';
import { ffpaInstanceDims, type FfpaInstanceDims } from '../ffpaInstanceDims.ts';

/** FFPA's sm_80 instance names (`ffpa_fwd_sm80_…`) and source header. */
export const FFPA_SM80_INSTANCE_HEADER: FmhaFwdInstanceHeader = Object.freeze({
  prefix: 'ffpa_fwd_sm80',
  title: 'ffpa forward (large head dims, split-D, sm_80 pipeline)',
  generator: '@tilekit/kernel-ffpa',
});

/** The most columns of O one sm_80 CTA computes: 64 query rows × 256 fp32 columns over 128 threads (128 registers each). */
export const FFPA_SM80_MAX_SLICE_COLUMNS = 256;

/**
 * The ring of every sm_80 instance: Q and K in 64-column chunks (four mma k-steps per barrier),
 * 3 slots of 16 KiB (Q chunk 8 KiB + K chunk 8 KiB, or a V chunk of 8 KiB): 48 KiB + 1 KiB of
 * alignment slack for every d. P·V accumulates in fp32.
 */
export const FFPA_SM80_RING = Object.freeze({ qkChunk: 64, stages: 3, pvAccumulation: 'f32' } as const);

/** An sm_80 FFPA instance: one dtype, (d, slice width), mask kind, target (default sm_90a). */
export type FfpaSm80Instance = FmhaFwdSm80LoopInstance<FmhaFwdSm80SplitDPipeline>;

/** Every (d_qk, slice width) an FFPA problem needs on the sm_80 path: each head-dim pair's 256-column slices, deduplicated, in order. */
export const FFPA_SM80_INSTANCE_DIMS: readonly FfpaInstanceDims[] = ffpaInstanceDims(FFPA_SM80_MAX_SLICE_COLUMNS);

/** One sm_80 FFPA instance: 64 query rows (4 warps) × 64 key rows per tile, the {@link FFPA_SM80_RING}. */
export function ffpaSm80Instance(
  dtype: (typeof FMHA_FWD_DTYPES)[number],
  headDim: number,
  headDimV: number,
  mask: FmhaFwdMaskKind,
  target: Target = sm90a,
): FfpaSm80Instance {
  const pipeline = new FmhaFwdSm80SplitDPipeline({ dtype, headDim, headDimV, tileM: 64, tileN: 64, ...FFPA_SM80_RING });
  return new FmhaFwdSm80LoopInstance(pipeline, { mask, target, header: FFPA_SM80_INSTANCE_HEADER });
}

/** Every dtype × {@link FFPA_SM80_INSTANCE_DIMS} × mask kind, built for sm_90a. Postcondition (tested): names and hashes unique. */
export const FFPA_SM80_CATALOG: readonly FfpaSm80Instance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FFPA_SM80_INSTANCE_DIMS.flatMap(({ headDim, headDimV }) => FFPA_MASKS.map((mask) => ffpaSm80Instance(dtype, headDim, headDimV, mask))),
  ),
);

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique in `catalog`. */
export function checkFfpaSm80Catalog(catalog: readonly FfpaSm80Instance[]): void {
  checkUniqueInstances('ffpa sm_80', catalog);
}
checkFfpaSm80Catalog(FFPA_SM80_CATALOG);
