// FFPA's sm_90a instances, composed from the forward pipeline's hooks: Q and K streamed through
// shared memory in 64-column chunks of the head dim (FmhaFwdChunkedQkSource: shared memory does not
// grow with d), O split by columns across two consumer warpgroups of which one computes S and the
// softmax and hands P to the other (FmhaFwdSharePOutputSplit: Q·Kᵀ once per key tile). One instance
// per (d, slice width): d_v above 512 runs as column slices across CTAs (ffpaColumnSlices); where d
// and d_v split into whole 128-column halves, also as a cluster of two CTAs that split Q·Kᵀ's head
// dim between them and exchange partial S through distributed shared memory (FmhaFwdClusterQkSource).
import {
  FMHA_FWD_DTYPES,
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  FMHA_FWD_STAGES,
  FmhaFwdChunkedQkSource,
  FmhaFwdClusterQkSource,
  FmhaFwdSharePOutputSplit,
  type FmhaFwdQkSource,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { FmhaFwdInstance, type FmhaFwdInstanceHeader } from '@tilekit/fmha-launch';
import { FFPA_HEAD_DIMS } from './ffpaHeadDims.ts';
import { ffpaInstanceDims, type FfpaInstanceDims } from './ffpaInstanceDims.ts';

/** FFPA's instance names (`ffpa_fwd_sm90_…`) and source header. */
export const FFPA_INSTANCE_HEADER: FmhaFwdInstanceHeader = Object.freeze({
  prefix: 'ffpa_fwd_sm90',
  title: 'ffpa forward (large head dims, split-D)',
  generator: '@tilekit/kernel-ffpa',
});

/** The mask kinds: none, and the window (causal top-left / bottom-right and sliding windows are its cases). */
export const FFPA_MASKS: readonly FmhaFwdMaskKind[] = Object.freeze(['none', 'window']);

/** Q·Kᵀ in 64-column chunks of the head dim through a 4-deep ring of Q and K chunks. */
export const FFPA_QK_SOURCE = new FmhaFwdChunkedQkSource(4);

/**
 * The cluster plan's Q·Kᵀ: each CTA's half of the head dim through a chunk ring 4 deep. With a
 * CTA's V tiles 448 or 512 columns wide the two exchange buffers of partial S leave room for a ring
 * only 2 deep, which measured slower than column slices (H200, d1024: 46.7 ms against 34.7 ms), so
 * the cluster plan stops at 384 columns per CTA.
 */
export const FFPA_CLUSTER_QK_SOURCE = new FmhaFwdClusterQkSource(4);

/** Two consumer warpgroups, each with half of the slice's columns of O, the first computing S and sharing P. */
export const FFPA_OUTPUT_SPLIT = new FmhaFwdSharePOutputSplit();

/** Every (d_qk, slice width) an FFPA problem needs: each head-dim pair's column slices, deduplicated, in order. */
export const FFPA_INSTANCE_DIMS: readonly FfpaInstanceDims[] = ffpaInstanceDims();

/** (d_qk, columns per CTA) of the cluster plan: d = d_v above 512 in whole 128-column halves of at most 384 columns (640, 768). */
export const FFPA_CLUSTER_DIMS: readonly { readonly headDim: number; readonly headDimV: number }[] = Object.freeze(
  FFPA_HEAD_DIMS.filter((p) => p.hdimQ === p.hdimV && p.hdimV > 512 && p.hdimV <= 768 && p.hdimV % 128 === 0).map((p) =>
    Object.freeze({ headDim: p.hdimQ, headDimV: p.hdimV / 2 }),
  ),
);

/**
 * One instance: 64 query rows × 64 key rows per tile. Unmasked instances overlap each tile's
 * softmax with the previous tile's P·V in the scoring warpgroup (with the window mask that
 * schedule spills at d 512, so masked ones run one tile at a time).
 */
export function ffpaInstance(
  dtype: (typeof FMHA_FWD_DTYPES)[number],
  headDim: number,
  headDimV: number,
  mask: FmhaFwdMaskKind,
  qkSource: FmhaFwdQkSource = FFPA_QK_SOURCE,
): FmhaFwdInstance {
  return new FmhaFwdInstance(
    {
      dtype,
      headDim,
      headDimV,
      tileM: 64,
      tileN: 64,
      qkSource,
      outputSplit: FFPA_OUTPUT_SPLIT,
      ...(mask === 'none' ? { schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } : {}),
      stages: FMHA_FWD_STAGES,
      ...FMHA_FWD_REGISTER_SPLIT,
      mask,
      splitKv: false,
    },
    undefined,
    FFPA_INSTANCE_HEADER,
  );
}

/** Every dtype × ({@link FFPA_INSTANCE_DIMS}, then {@link FFPA_CLUSTER_DIMS} with the cluster Q·Kᵀ) × mask kind. */
export const FFPA_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) => [
    ...FFPA_INSTANCE_DIMS.flatMap(({ headDim, headDimV }) => FFPA_MASKS.map((mask) => ffpaInstance(dtype, headDim, headDimV, mask))),
    ...FFPA_CLUSTER_DIMS.flatMap(({ headDim, headDimV }) =>
      FFPA_MASKS.map((mask) => ffpaInstance(dtype, headDim, headDimV, mask, FFPA_CLUSTER_QK_SOURCE)),
    ),
  ]),
);
