// The row kernels of FFPA's backward at FFPA's head dims: dot_do_o (D = rowsum(dO ∘ O)) per d_v and
// convert_dq (the atomic dq_acc into dQ) per d, both from @tilekit/fmha-launch.
import { FMHA_BWD_KERNEL_DTYPES, FmhaBwdConvertDqInstance, FmhaBwdDotDoOInstance } from '@tilekit/fmha-launch';
import { checkUniqueInstances } from '../checkUniqueInstances.ts';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';

/** Threads of the dot_do_o and convert_dq blocks. */
export const FFPA_BWD_ROW_THREADS = 128;

const distinct = (xs: readonly number[]): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** dot_do_o: {fp16, bf16} × every FFPA d_v. */
export const FFPA_BWD_DOT_DO_O_CATALOG: readonly FmhaBwdDotDoOInstance[] = Object.freeze(
  FMHA_BWD_KERNEL_DTYPES.flatMap((dtype) =>
    distinct(FFPA_HEAD_DIMS.map((h) => h.hdimV)).map(
      (headDimV) => new FmhaBwdDotDoOInstance({ dtype, headDimV, threads: FFPA_BWD_ROW_THREADS }),
    ),
  ),
);

/** convert_dq: {fp16, bf16} × every FFPA d, the atomic workspace layout (one split). */
export const FFPA_BWD_CONVERT_DQ_CATALOG: readonly FmhaBwdConvertDqInstance[] = Object.freeze(
  FMHA_BWD_KERNEL_DTYPES.flatMap((dtype) =>
    distinct(FFPA_HEAD_DIMS.map((h) => h.hdimQ)).map(
      (headDim) => new FmhaBwdConvertDqInstance({ dtype, headDim, threads: FFPA_BWD_ROW_THREADS, deterministic: false }),
    ),
  ),
);
checkUniqueInstances('ffpa backward row', [...FFPA_BWD_DOT_DO_O_CATALOG, ...FFPA_BWD_CONVERT_DQ_CATALOG]);
