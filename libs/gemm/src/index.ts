// @tilekit/gemm: GEMM in CK-tile's layers. So far: the warp layer (MMA atoms with their fragment
// encodings and leaf wrappers, the dispatcher), wgmma descriptors and swizzled shared-memory
// layouts, the CPU reference GEMM, the sm_90a block GEMM (A/B in shared memory, C in registers) and
// the warp-specialized TMA + mbarrier + wgmma pipeline with its tile partition and epilogue.
export * from './errors.ts';
export * from './warp/index.ts';
export { makeWgmmaSmemLayout, wgmmaOperandDescriptor, type OperandMajor, type WgmmaOperandOrigin, type WgmmaSmemLayout, type WgmmaSmemLayoutSpec } from './smemLayouts.ts';
export { referenceGemm, type GemmLayout, type ReferenceGemmArgs, type ReferenceGemmOperand } from './reference/referenceGemm.ts';
export * from './block/index.ts';
export * from './pipeline/index.ts';
