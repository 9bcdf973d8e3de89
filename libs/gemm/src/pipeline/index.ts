export {
  GEMM_DYNAMIC_SMEM,
  tmaOperandLoads,
  WsTmaWgmmaPipeline,
  type TmaOperandLoads,
  type WsTmaWgmmaArgs,
  type WsTmaWgmmaPolicy,
} from './wsTmaWgmmaPipeline.ts';
export {
  applyGemmActivation,
  applyGemmEpilogue,
  checkGemmEpilogue,
  emitGemmActivation,
  emitGemmEpilogue,
  GEMM_ACTIVATIONS,
  GEMM_EPILOGUE_NONE,
  GemmEpilogueError,
  isIdentityEpilogue,
  type GemmActivation,
  type GemmEpilogue,
  type GemmEpilogueArgs,
} from './gemmEpilogue.ts';
export { MfmaLdsPipeline, type MfmaLdsPipelineArgs, type MfmaLdsPipelinePolicy } from './mfmaLdsPipeline.ts';
export { CpAsyncMmaPipeline, type CpAsyncMmaArgs, type CpAsyncMmaPolicy, type CpAsyncOperand } from './cpAsyncMmaPipeline.ts';
export { GroupedTilePartitioner, type GroupedTilePartitionPolicy } from './groupedTilePartitioner.ts';
