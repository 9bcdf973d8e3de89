// @tilekit/kernel-fmha-bwd: attention backward on sm_90a. Re-exports only, by concept.
// The row kernels (dot_do_o, convert_dq) live in @tilekit/fmha-launch, shared with FFPA's backward.
export {
  FMHA_BWD_DQ_STORE_VECTOR,
  FMHA_BWD_KERNEL_DTYPES,
  FmhaBwdConvertDqInstance,
  FmhaBwdDotDoOInstance,
  fmhaBwdRowTile,
  type FmhaBwdConvertDqPolicy,
  type FmhaBwdDotDoOPolicy,
  type FmhaBwdKernelDType,
  type FmhaBwdRowLaunch,
  type FmhaBwdRowTile,
  type FmhaBwdRowTileSpec,
} from '@tilekit/fmha-launch';
export * from './fmhaBwdCatalog.ts';
// The problem and its checks live in @tilekit/fmha, shared with FFPA's backward.
export {
  checkFmhaBwdProblem,
  compareFmhaBwd,
  fmhaBwdReference,
  type FmhaBwdComparison,
  type FmhaBwdHostInputs,
  type FmhaBwdReference,
  FMHA_BWD_DTYPES,
  FMHA_BWD_PROBLEM_MAX_SEQLEN,
  FMHA_BWD_TENSORS,
  FmhaBwdArgumentError,
  fmhaBwdOperandElements,
  fmhaBwdProblemFlops,
  fmhaBwdSequences,
  fmhaBwdTraitsOf,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type FmhaBwdDType,
  type FmhaBwdProblem,
  type FmhaBwdTensor,
} from '@tilekit/fmha';
export * from './fmhaBwdDispatch.ts';
export * from './fmhaBwdRunner.ts';
export * from '@tilekit/fmha';
export * from './fmhaBwdScoreModCatalog.ts';
