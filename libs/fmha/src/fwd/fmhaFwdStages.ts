// The K/V ring depth of the sm_90a warp-specialized forward kernels (dense and sparse).

/** K/V ring depth. */
export const FMHA_FWD_STAGES = 2;
