// The sparse MLA prefill instances the launcher picks from.
import { DsaSparseMlaPrefillInstance } from './dsaSparseMlaPrefillInstance.ts';

/** Every sparse MLA prefill instance: consumers at 216 registers, the producer at 72 (fewer spill its unrolled gather; sm_90a). */
export const DSA_SPARSE_MLA_PREFILL_CATALOG: readonly DsaSparseMlaPrefillInstance[] = Object.freeze([
  new DsaSparseMlaPrefillInstance({ consumerRegisters: 216, producerRegisters: 72 }),
]);
