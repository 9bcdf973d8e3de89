// @tilekit/kernel-gemm: C = A·B on sm_90a (warp-specialized TMA + wgmma). Re-exports only, by concept.

// Problem: what to compute.
export * from './gemmProblem.ts';
// Instances (Policy + the pipeline of @tilekit/gemm), catalog and dispatch.
export * from './gemmInstance.ts';
export * from './gemmCatalog.ts';
export * from './gemmDispatch.ts';
// The typed launcher.
export * from './gemmLauncher.ts';
