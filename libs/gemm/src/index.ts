// @tilekit/gemm: GEMM in CK-tile's layers. So far: the warp layer (MMA atoms with their fragment
// encodings and leaf wrappers, the dispatcher), wgmma descriptors and swizzled shared-memory
// layouts, and the CPU reference GEMM.
export * from './errors.ts';
export * from './warp/index.ts';
export { makeWgmmaSmemLayout, wgmmaOperandDescriptor, type OperandMajor, type WgmmaOperandOrigin, type WgmmaSmemLayout, type WgmmaSmemLayoutSpec } from './smemLayouts.ts';
export { referenceGemm, type GemmLayout, type ReferenceGemmArgs, type ReferenceGemmOperand } from './reference/referenceGemm.ts';
