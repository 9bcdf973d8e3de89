// The nvcc flags every forward attention kernel is compiled with.

/** nvcc flags of every forward instance (the sm_90a and sm_80 kernels, the combine, the sparse kernels). */
export const FMHA_FWD_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);
