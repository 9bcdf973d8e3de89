// Forward instances for head dims above 256, composed from two pipeline hooks: Q and K streamed in
// 64-column chunks of the head dim (FmhaFwdChunkedQkSource) and O split by columns across two
// groups of consumer warpgroups (FmhaFwdRecomputeSOutputSplit, FmhaFwdSharePOutputSplit). Compiled in CI like the dense
// catalog (fmhaFwdCatalog.compile.spec.ts); the FFPA operator (issue 19) builds on them.
import {
  FMHA_FWD_DTYPES,
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_STAGES,
  FmhaFwdChunkedQkSource,
  FmhaFwdRecomputeSOutputSplit,
  FmhaFwdSharePOutputSplit,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  type FmhaFwdConsumerSchedule,
  type FmhaFwdMaskKind,
  type FmhaFwdOutputSplit,
} from '@tilekit/fmha';
import { FMHA_FWD_MASKS } from './fmhaFwdCatalog.ts';
import { FmhaFwdInstance } from './fmhaFwdInstance.ts';

/**
 * Head dims (d_qk, d_v): 320 … 512 in steps of 64 and MLA's 576 / 512; 64 query rows per group, 64
 * key rows per tile. d_v 320 and 448 split into halves of 192 and 256 columns, the second padded.
 */
export const FMHA_FWD_LARGE_HEAD_TILES = Object.freeze([
  { headDim: 320, headDimV: 320, tileM: 64, tileN: 64 },
  { headDim: 384, headDimV: 384, tileM: 64, tileN: 64 },
  { headDim: 448, headDimV: 448, tileM: 64, tileN: 64 },
  { headDim: 512, headDimV: 512, tileM: 64, tileN: 64 },
  { headDim: 576, headDimV: 512, tileM: 64, tileN: 64 },
]);

const QK_CHUNKS = new FmhaFwdChunkedQkSource(4);
/**
 * The two ways to split O in halves: both warpgroups compute S (`recomputeS`), or one computes it
 * and hands P to the other through shared memory (`shareP`: Q·Kᵀ once per tile).
 */
export const FMHA_FWD_LARGE_HEAD_SPLITS = Object.freeze([new FmhaFwdRecomputeSOutputSplit(2), new FmhaFwdSharePOutputSplit()]);

/**
 * With P shared, the scoring warpgroup overlaps each tile's softmax with the previous tile's P·V
 * (unmasked instances; the window instance spills with it at d 512); the others run one tile at a time.
 */
function scheduleOf(split: FmhaFwdOutputSplit, mask: FmhaFwdMaskKind): { schedule?: FmhaFwdConsumerSchedule } {
  return split.tag === 'shareP' && mask === 'none' ? { schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } : {};
}

/** One-pass instances of every dtype, mask and split for each of {@link FMHA_FWD_LARGE_HEAD_TILES}. */
export const FMHA_FWD_LARGE_HEAD_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FMHA_FWD_LARGE_HEAD_TILES.flatMap((dims) =>
      FMHA_FWD_LARGE_HEAD_SPLITS.flatMap((outputSplit) =>
        FMHA_FWD_MASKS.map(
          (mask) =>
            new FmhaFwdInstance({
              dtype,
              ...dims,
              qkSource: QK_CHUNKS,
              outputSplit,
              ...scheduleOf(outputSplit, mask),
              stages: FMHA_FWD_STAGES,
              ...FMHA_FWD_REGISTER_SPLIT,
              mask,
              splitKv: false,
            }),
        ),
      ),
    ),
  ),
);
