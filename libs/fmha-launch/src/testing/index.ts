// Test harness of @tilekit/fmha-launch for the attention operators' GPU specs (node:test on the GPU machine).
export * from './fmhaFwdGpuCase.ts';
export * from './fmhaBwdReferenceCase.ts';
export * from './fmhaBwdGpuBuffers.ts';
export * from './fmhaBwdProblemGpuCase.ts';
export * from './fmhaBwdDqDkDvGpuRun.ts';
