export {
  defineWgmmaCommitGroup,
  defineWgmmaFence,
  defineWgmmaFenceOperands,
  defineWgmmaWaitGroup,
  mfma32x32x8Atom,
  mmaSyncM16n8k16Atom,
  WarpGemmAtom,
  wgmmaAtom,
  wgmmaRegisterAFragment,
  type OperandSource,
  type WarpGemmAtomSpec,
  type WarpGemmKind,
  type WgmmaAtomSpec,
} from './warpGemmAtom.ts';
export { selectWarpGemmAtom, type WarpGemmQuery } from './selectWarpGemmAtom.ts';
export {
  decodeWgmmaDescriptor,
  defineWgmmaDescriptorEncoder,
  encodeWgmmaDescriptor,
  WGMMA_DESCRIPTOR_ENCODER,
  wgmmaDescriptorBits,
  wgmmaSwizzleCode,
  wgmmaSwizzleModes,
  type WgmmaDescriptorFields,
  type WgmmaSwizzle,
} from './wgmmaDescriptor.ts';
