export { BlockGemmPolicyError, callLeaf, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from './blockGemmWgmmaSs.ts';
export { aFragmentOfAccumulator, WgmmaBlockGemmRs, type WgmmaBlockGemmRsPolicy } from './blockGemmWgmmaRs.ts';
export {
  evaluateMfma,
  evaluateMfmaBlockGemm,
  GFX942_LDS,
  iterateKEncoding,
  makeMfmaLdsLayout,
  MfmaBlockGemm,
  MfmaBlockGemmPolicyError,
  type MfmaBlockGemmPolicy,
  type MfmaLdsLayout,
} from './blockGemmMfma.ts';
export {
  LdmatrixOperandPlan,
  MmaSyncBlockGemmRs,
  MmaSyncBlockGemmSs,
  type LdmatrixLoad,
  type MmaSyncBlockGemmPolicy,
  type MmaSyncBlockGemmState,
} from './blockGemmMmaSync.ts';
export { ldmatrixBankGroups, makeLdmatrixSmemLayout, type LdmatrixSmemLayoutSpec } from './blockGemmMmaSyncSmem.ts';
export {
  emitCToAFragment,
  mmaSyncARegisterEncoding,
  mmaSyncCEncoding,
  mmaSyncCToAEncoding,
  type MmaSyncWarpTiling,
} from './mmaFragments.ts';
