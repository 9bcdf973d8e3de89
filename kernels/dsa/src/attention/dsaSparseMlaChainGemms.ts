// The block GEMMs of the chained sparse MLA schedule: S = Q·Kᵀ over 64 heads × 64 tokens, O_half += P·V with P in
// registers (the warpgroup's own block) or in shared memory (the other warpgroup's), over 256 of the 512 value columns.
import { WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_CHAIN_KEYS } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_SLAB } from './dsaSparseMlaSmem.ts';

const HALF = DSA_SPARSE_MLA_V_DIM / 2;

/** S = Q·Kᵀ, one 64-column slab per call: A = Q, B = the block's keys, both K-major. */
export const DSA_SPARSE_MLA_CHAIN_QK = new WgmmaBlockGemmSs({
  dtype: 'bf16',
  tileM: DSA_SPARSE_MLA_HEAD_BLOCK,
  tileN: DSA_SPARSE_MLA_CHAIN_KEYS,
  tileK: DSA_SPARSE_MLA_SLAB,
});

/** O_half += P·V of the warpgroup's own block: P from registers, V = four slabs of the block as an MN-major B. */
export const DSA_SPARSE_MLA_CHAIN_PV = new WgmmaBlockGemmRs({
  dtype: 'bf16',
  tileM: DSA_SPARSE_MLA_HEAD_BLOCK,
  tileN: HALF,
  tileK: DSA_SPARSE_MLA_CHAIN_KEYS,
  bMajor: 'MN',
});

/** O_half += P·V of the other warpgroup's block: its P from shared memory (K-major A), V as above. */
export const DSA_SPARSE_MLA_CHAIN_PEER_PV = new WgmmaBlockGemmSs({
  dtype: 'bf16',
  tileM: DSA_SPARSE_MLA_HEAD_BLOCK,
  tileN: HALF,
  tileK: DSA_SPARSE_MLA_CHAIN_KEYS,
  bMajor: 'MN',
});
