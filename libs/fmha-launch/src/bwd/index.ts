// The backward's row kernels (dot_do_o: Delta = rowsum(dO∘O); convert_dq: the fp32 dQ workspace to the
// dtype), for any head dim their row tile covers: the dense backward and FFPA name their own catalogs.
export * from './fmhaBwdRowTileEncoding.ts';
export * from './fmhaBwdRowKernel.ts';
export * from './fmhaBwdDotDoO.ts';
export * from './fmhaBwdConvertDq.ts';

// The runners' shared launch side: loaded kernels, the row kernels' launches, the CUDA executor of
// the pure launcher, and the buffers of a run with their checks.
export * from './fmhaBwdKernel.ts';
export * from './buildFmhaBwdKernelsOnce.ts';
export * from './fmhaBwdRowLaunches.ts';
export * from './fmhaBwdCudaExecutor.ts';
export * from './fmhaBwdRunnerBuffers.ts';
export * from './fmhaBwdRunnerBase.ts';
export * from './fmhaBwdDqDkDvArgValues.ts';
export * from './fmhaBwdStrideProblems.ts';
export * from './fmhaBwdTmaMap.ts';
