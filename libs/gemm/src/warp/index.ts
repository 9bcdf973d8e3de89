export { defineWgmmaCommitGroup, defineWgmmaFence, defineWgmmaWaitGroup } from './defineWgmmaFence.ts';
export { defineWgmmaFenceOperands } from './defineWgmmaFenceOperands.ts';
export { mfma32x32x8Atom } from './mfma32x32x8Atom.ts';
export { mmaSyncM16n8k16Atom } from './mmaSyncM16n8k16Atom.ts';
export { WarpGemmAtom, type OperandSource, type WarpGemmAtomSpec, type WarpGemmKind } from './warpGemmAtom.ts';
export { wgmmaAtom, type WgmmaAtomSpec } from './wgmmaAtom.ts';
export { wgmmaFp8Atom, wgmmaFp8Ns } from './wgmmaFp8Atom.ts';
export { wgmmaRegisterAFragment } from './wgmmaRegisterAFragment.ts';
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
