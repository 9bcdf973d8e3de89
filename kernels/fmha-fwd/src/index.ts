// @tilekit/kernel-fmha-fwd: FMHA forward on sm_90a. Re-exports only, by concept.

// Problem: what to compute, validated with every default filled in.
export * from './fmhaFwdProblem.ts';

// The parameters and the per-block prologue (sequence, mask, bases) every forward kernel shares,
// the sparse attention kernels of @tilekit/kernel-sparge included.
export * from './fmhaFwdParams.ts';
export * from './fmhaFwdSequence.ts';

// Instances, the catalog and the launcher.
export * from './fmhaFwdInstance.ts';
export * from './fmhaFwdCatalog.ts';
export * from './fmhaFwdLauncher.ts';
export * from './fmhaFwdLoadedKernel.ts';
export * from './fmhaFwdDispatch.ts';

// Split-KV: the split heuristic, the combine kernel and its launcher.
export * from './fmhaFwdSplit.ts';
export * from './fmhaFwdCombine.ts';
export * from './fmhaFwdCombineLauncher.ts';

// The flags the attention examples share (shape, layouts, mask, precision, scale).
export * from './attentionExampleFlags.ts';

// The operator-level runner (plan, kernels, workspace, launches).
export * from './fmhaFwdRunner.ts';
// The sm_80 path (cp.async + mma.sync; runs on sm_90 when built for it).
export * from './sm80/index.ts';
