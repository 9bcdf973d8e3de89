// The sparse MLA prefill instances the launcher picks from.
import { DsaSparseMlaPrefillInstance } from './dsaSparseMlaPrefillInstance.ts';

/** Every sparse MLA prefill instance: consumers at 200 registers, the producer at 104 (the split that compiles without spills; sm_90a). */
export const DSA_SPARSE_MLA_PREFILL_CATALOG: readonly DsaSparseMlaPrefillInstance[] = Object.freeze([
  new DsaSparseMlaPrefillInstance({ consumerRegisters: 200, producerRegisters: 104 }),
]);
