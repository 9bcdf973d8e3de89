// Reading latent rows by index: the accessor the sparse MLA references gather through.
import { DSA_SPARSE_MLA_QK_DIM } from '../dsaSparseMlaShape.ts';

/**
 * A decoded latent row (576 values: 512 latent ‖ 64 RoPE) by its index (a token of the prefill kv, or a cache slot
 * page · 64 + offset), or `undefined` when no such row exists: the index is then invalid and contributes nothing.
 * The references call it only with indices ≥ 0.
 */
export type DsaSparseMlaRowReader = (index: number) => Float32Array | undefined;

/** The reader of `tokens` rows of 576 values stored contiguously in `rows`: indices in [0, tokens) are valid, others not. */
export function dsaSparseMlaRowsReader(rows: Float32Array, tokens: number): DsaSparseMlaRowReader {
  return (index) =>
    index >= 0 && index < tokens ? rows.subarray(index * DSA_SPARSE_MLA_QK_DIM, (index + 1) * DSA_SPARSE_MLA_QK_DIM) : undefined;
}
