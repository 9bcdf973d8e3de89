// The sm_90a forward pipeline policy the pipeline specs start from: fp16, d 128, 128 × 128 tiles,
// two stages, the catalog's register split; each spec overrides what it is about.
import type { FmhaFwdWsPolicy } from '../pipeline/fmhaFwdWsPipeline.ts';

/** A valid sm_90a forward policy with `overrides` applied. */
export function fmhaFwdWsTestPolicy(overrides: Partial<FmhaFwdWsPolicy> = {}): FmhaFwdWsPolicy {
  return {
    dtype: 'fp16',
    headDim: 128,
    headDimV: 128,
    tileM: 128,
    tileN: 128,
    stages: 2,
    producerRegisters: 24,
    consumerRegisters: 240,
    ...overrides,
  };
}
