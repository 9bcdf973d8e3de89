// @tilekit/kernel-ffpa: FFPA split-D attention for large head dims (320–1024): an sm_90a path and FFPA L1's sm_80 path
// (which runs on Hopper too). Re-exports only, by concept.

// Problem: the forward attention problem with FFPA's head dims, one pass.
export * from './ffpaHeadDims.ts';
export * from './checkFfpaProblem.ts';

// Plan: O split into column slices across CTAs, each slice's instance from the catalog.
export * from './ffpaColumnSlices.ts';
export * from './ffpaInstanceDims.ts';
export * from './ffpaCatalog.ts';
export * from './sm80/ffpaSm80Catalog.ts';
export * from './ffpaKernel.ts';
export * from './ffpaDispatch.ts';
export * from './ffpaPlan.ts';

// Backward: the problem, the dq_dk_dv instances (split-D: the sm_80 pipeline built for sm_90a, and the sm_90a
// warp-specialized TMA pipeline), the row kernels at FFPA's head dims, and the runner over the pure launcher.
export * from './bwd/ffpaBwdInstance.ts';
export * from './bwd/ffpaBwdCatalog.ts';
export * from './bwd/ffpaBwdLauncher.ts';
export * from './bwd/ffpaBwdSm90Instance.ts';
export * from './bwd/ffpaBwdSm90Catalog.ts';
export * from './bwd/ffpaBwdSm90Launcher.ts';
export * from './bwd/checkFfpaBwdProblem.ts';
export * from './bwd/ffpaBwdRowCatalog.ts';
export * from './bwd/ffpaBwdKernelSet.ts';
export * from './bwd/ffpaBwdRunner.ts';

// Launch: the slices' launches, validated together; the operator-level runner.
export * from './ffpaLauncher.ts';
export * from './ffpaRunner.ts';
