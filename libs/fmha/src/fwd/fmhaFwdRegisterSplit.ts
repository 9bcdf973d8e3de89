// The register budgets of the sm_90a warp-specialized forward kernels (dense and sparse).

/** Register budgets after setmaxnreg: 24 for the producer warpgroup, 240 for each of the two consumers (24·128 + 240·256 ≤ 64K). */
export const FMHA_FWD_REGISTER_SPLIT = Object.freeze({ producerRegisters: 24, consumerRegisters: 240 });
