export { GEMM_DYNAMIC_SMEM, WsTmaWgmmaPipeline, type WsTmaWgmmaArgs, type WsTmaWgmmaPolicy } from './wsTmaWgmmaPipeline.ts';
