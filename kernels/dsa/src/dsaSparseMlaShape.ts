// The fixed shapes of DeepSeek sparse MLA attention (DeepSeek-V3.2 absorbed MLA; FlashMLA's sparse kernels).
// The FP8 cache layout (656-byte tokens, pages of 64) is in dsaMlaCacheLayout.

/** Dims of every query head and of the one latent KV head: 512 latent (the RMSNorm'ed c) + 64 RoPE. */
export const DSA_SPARSE_MLA_QK_DIM = 576;

/** Dims of V and of the output: V is the first 512 dims of the same latent row. */
export const DSA_SPARSE_MLA_V_DIM = 512;

/** Query head counts the sparse MLA kernels serve (DeepSeek-V3.2 uses 128; some deployments 64). */
export const DSA_SPARSE_MLA_HEADS: readonly number[] = Object.freeze([64, 128]);

/** DeepSeek-V3.2's softmax scale: (128 + 64)^-½ · (0.1·ln 40 + 1)² (YaRN mscale²), not 576^-½. */
export const DSA_SPARSE_MLA_SM_SCALE = 0.135234;

/** Largest top-k the sparse MLA kernels accept (FlashMLA's decode is measured up to 32768; kernels pad internally). */
export const DSA_SPARSE_MLA_TOPK_MAX = 32768;

/** Queries per sequence in one decode step (1, or 2 with one multi-token-prediction draft). */
export const DSA_SPARSE_MLA_DECODE_SQ: readonly number[] = Object.freeze([1, 2]);
