// example_sparge: the example's public surface, composed from its parts (flags, plan, kernels,
// inputs, sparsity report, CPU references, the O/LSE check and the run); main.ts is the executable.
export {
  parsePerHead,
  SPARGE_EXAMPLE_DEFAULT_TOPK,
  SPARGE_FLAG_OF,
  SpargeFlagError,
  spargeParser,
  type SpargeExampleArgs,
} from './spargeExampleFlags.ts';
export { formatSpargeProblem, planSpargeExample, spargeDenseFlops, spargeProblemFromArgs } from './spargeExamplePlan.ts';
export { compileSpargeExampleKernels, spargeExampleKernels, type SpargeExampleKernel } from './spargeExampleKernels.ts';
export { spargeExampleInputs, type SpargeExampleInputs } from './spargeExampleInputs.ts';
export { formatSpargeMapSummary, summarizeSpargeMap, type SpargeMapSummary } from './spargeExampleSparsity.ts';
export { spargeAttentionReference, spargeAttentionValues, spargeCpuBlockMap, type SpargeCpuReference } from './spargeExampleReference.ts';
export { compareSpargeAttention } from './spargeExampleCompare.ts';
export { runSpargeExample } from './spargeExampleRun.ts';
