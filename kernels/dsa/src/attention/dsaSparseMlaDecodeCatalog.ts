// The sparse MLA decode instances the launcher picks from.
import { DsaSparseMlaDecodeInstance } from './dsaSparseMlaDecodeInstance.ts';
import { DSA_SPARSE_MLA_MAX_SPLITS, DsaSparseMlaCombineInstance } from './dsaSparseMlaCombineInstance.ts';

/** The decode instance that writes the final outputs (one split per query row): the prefill's register split. */
export const DSA_SPARSE_MLA_DECODE_FINAL = new DsaSparseMlaDecodeInstance({
  consumerRegisters: 216,
  producerRegisters: 72,
  output: 'final',
});

/** The decode instance that writes one split's fp32 partials (merged by the combine kernel). */
export const DSA_SPARSE_MLA_DECODE_PARTIAL = new DsaSparseMlaDecodeInstance({
  consumerRegisters: 216,
  producerRegisters: 72,
  output: 'partial',
});

/** Every sparse MLA decode instance (sm_90a). */
export const DSA_SPARSE_MLA_DECODE_CATALOG: readonly DsaSparseMlaDecodeInstance[] = Object.freeze([
  DSA_SPARSE_MLA_DECODE_FINAL,
  DSA_SPARSE_MLA_DECODE_PARTIAL,
]);

/** The combine of the split decode: one 128-thread block per (row, head), up to the most splits a decode can have. */
export const DSA_SPARSE_MLA_COMBINE = new DsaSparseMlaCombineInstance({ maxSplits: DSA_SPARSE_MLA_MAX_SPLITS });
