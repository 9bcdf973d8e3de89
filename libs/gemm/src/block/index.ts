export { BlockGemmPolicyError, callLeaf, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from './blockGemmWgmmaSs.ts';
