// @tilekit/kernel-fmha-fwd: FMHA forward on sm_90a. Re-exports only, by concept.

// Problem: what to compute, validated with every default filled in (from @tilekit/fmha, where the
// forward kernels of @tilekit/kernel-sparge find it too; re-exported for this package's users).
export {
  checkFmhaFwdKernelRules,
  checkFmhaFwdProblem,
  FMHA_FWD_DTYPES,
  FMHA_FWD_HEAD_DIMS,
  FMHA_FWD_MAX_BATCH,
  FMHA_FWD_MAX_HEADS,
  FMHA_FWD_MAX_SEQLEN,
  FMHA_FWD_MAX_SPLITS,
  FmhaFwdArgumentError,
  fmhaFwdOperandElements,
  fmhaFwdProblemFlops,
  fmhaFwdReferenceArgs,
  formatFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
  type FmhaFwdDType,
  type FmhaFwdLaunchProblem,
  type FmhaFwdMode,
  type FmhaFwdProblem,
  type FmhaFwdProblemMode,
} from '@tilekit/fmha';

// The parameters and the per-block prologue (sequence, mask, bases) every forward kernel shares,
// the sparse attention kernels of @tilekit/kernel-sparge included (from @tilekit/fmha).
export {
  emitFmhaFwdBase,
  emitFmhaFwdLseBase,
  emitFmhaFwdMask,
  emitFmhaFwdSequence,
  emitFmhaFwdWsBlock,
  FMHA_MAX_SEQLEN,
  fmhaFwdTileParams,
  type FmhaFwdBaseSpec,
  type FmhaFwdLaunch,
  type FmhaFwdMaskKind,
  type FmhaFwdSequence,
  type FmhaFwdSequenceParams,
  type FmhaFwdWsBlock,
  type FmhaFwdWsBlockParams,
  type FmhaFwdWsBlockSpec,
} from '@tilekit/fmha';

// Instances, the catalog and the launcher; the catalog constants and compile flags the sparse
// kernels share live in @tilekit/fmha, the launch checks in @tilekit/fmha-launch.
export * from './fmhaFwdCatalog.ts';
export * from './fmhaFwdScoreModCatalog.ts';
export * from './fmhaFwdPingPongCatalog.ts';
export * from './fmhaFwdOutputSplitCatalog.ts';
export { FMHA_FWD_COMPILE_FLAGS, FMHA_FWD_REGISTER_SPLIT, FMHA_FWD_STAGES, FmhaFwdCatalogError } from '@tilekit/fmha';
export * from '@tilekit/fmha-launch';
export * from './fmhaFwdDispatch.ts';

// Split-KV: the split heuristic, the combine kernel and its launcher.
export * from './fmhaFwdSplit.ts';
export * from './fmhaFwdCombine.ts';
export * from './fmhaFwdCombineLauncher.ts';

// The operator-level runner (plan, kernels, workspace, launches).
export * from './fmhaFwdRunner.ts';
// The sm_80 path (cp.async + mma.sync; runs on sm_90 when built for it).
export * from './sm80/index.ts';
