export { GEMM_DYNAMIC_SMEM, WsTmaWgmmaPipeline, type WsTmaWgmmaArgs, type WsTmaWgmmaPolicy } from './wsTmaWgmmaPipeline.ts';
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
