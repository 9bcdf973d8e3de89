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
export * from './fmhaBwdProblem.ts';
export * from './fmhaBwdDispatch.ts';
export * from './fmhaBwdRunner.ts';
export * from './fmhaBwdReference.ts';
export * from './fmhaBwdScoreModCatalog.ts';
