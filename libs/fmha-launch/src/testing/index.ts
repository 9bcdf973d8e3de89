// Test harness of @tilekit/fmha-launch for the forward attention operators' GPU specs (node:test on the GPU machine).
export * from './fmhaFwdGpuCase.ts';
