// @tilekit/gemm: GEMM in CK-tile's layers: the warp layer (MMA atoms with their fragment encodings
// and leaf wrappers, the dispatcher), wgmma descriptors and swizzled shared-memory layouts, the CPU
// reference GEMM, the block GEMMs (wgmma, mma.sync, MFMA; accumulator as a distributed tensor) and
// the pipelines (sm_90a warp-specialized TMA + wgmma, sm_80 cp.async + mma.sync, gfx942 LDS + MFMA)
// with their grouped tile partitioner and epilogue.
export * from './errors.ts';
export * from './warp/index.ts';
export { wgmmaInt8Ns } from './warp/wgmmaInt8Atom.ts';
export {
  makeWgmmaSmemLayout,
  wgmmaOperandDescriptor,
  type OperandMajor,
  type WgmmaOperandOrigin,
  type WgmmaSmemLayout,
  type WgmmaSmemLayoutSpec,
} from './smemLayouts.ts';
export { referenceGemm, type GemmLayout, type ReferenceGemmArgs, type ReferenceGemmOperand } from './reference/referenceGemm.ts';
export * from './block/index.ts';
export * from './pipeline/index.ts';
