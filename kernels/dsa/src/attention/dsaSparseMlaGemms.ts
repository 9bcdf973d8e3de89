// The two block GEMMs of a sparse MLA consumer warpgroup: S = Q·Kᵀ over 64 heads × 32 tokens (nine
// 64-column slabs of the 576) and O_half += P·V over its 256 of the 512 value columns.
import { WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_KEYS, DSA_SPARSE_MLA_SLAB } from './dsaSparseMlaSmem.ts';

/** Value columns each consumer warpgroup owns: 256 (FlashMLA's O split along d_v). */
export const DSA_SPARSE_MLA_V_HALF = DSA_SPARSE_MLA_V_DIM / 2;

/** S = Q·Kᵀ, one 64-column slab per call: A = Q, B = the tile's keys, both K-major. */
export const DSA_SPARSE_MLA_QK = new WgmmaBlockGemmSs({
  dtype: 'bf16',
  tileM: DSA_SPARSE_MLA_HEAD_BLOCK,
  tileN: DSA_SPARSE_MLA_KEYS,
  tileK: DSA_SPARSE_MLA_SLAB,
});

/** O_half += P·V: P from registers, V = four slabs of the tile's rows as an MN-major B. */
export const DSA_SPARSE_MLA_PV = new WgmmaBlockGemmRs({
  dtype: 'bf16',
  tileM: DSA_SPARSE_MLA_HEAD_BLOCK,
  tileN: DSA_SPARSE_MLA_V_HALF,
  tileK: DSA_SPARSE_MLA_KEYS,
  bMajor: 'MN',
});
