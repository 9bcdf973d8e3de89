// @tilekit/kernel-gemm: C = A·B on sm_90a (warp-specialized TMA + wgmma), sm_80 (cp.async + mma.sync)
// and gfx942 (MFMA; emitted and compiled only). Re-exports only, by concept.

// Problem: what to compute.
export * from './gemmProblem.ts';
// Which kernel family runs on which device.
export * from './gemmArch.ts';
// Instances (Policy + the pipeline of @tilekit/gemm), catalog and dispatch.
export * from './gemmInstance.ts';
export * from './gemmCatalog.ts';
export * from './gemmDispatch.ts';
// The typed launcher.
export * from './gemmLauncher.ts';
// The sm_80 path (cp.async + mma.sync; also runs on sm_90) and the gfx942 path (MFMA; emitted and compiled only).
export * from './sm80/index.ts';
export * from './gfx942/index.ts';
// Either family by name, built into its typed kernel.
export * from './anyGemmKernel.ts';
