// The tile window an epilogue of the sparse MLA consumers stores O through: the block's 64 rows of 512, each
// warpgroup its own half of the columns, in the P·V accumulator's distribution.
import { mul, type Expr } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor } from '@tilekit/layout';
import { makeTensorView, makeTileWindow, type TileWindow } from '@tilekit/tile';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_PV } from './dsaSparseMlaGemms.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK } from './dsaSparseMlaSmem.ts';
import type { DsaSparseMlaEpilogueState } from './dsaSparseMlaEpilogueState.ts';

/**
 * The window over `out` (a `bf16*` or `float*` of the block's O row 0, rows 512 elements apart, element `elementBytes`
 * wide) of columns [columns · wg, +columns) of the 64 rows, with vector length 2 (the accumulator's pairs).
 */
export function dsaSparseMlaOutWindow(state: DsaSparseMlaEpilogueState, out: Expr, columns: number, elementBytes: number): TileWindow {
  const desc = makeNaiveTensorDescriptor([DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_V_DIM], [DSA_SPARSE_MLA_V_DIM, 1], { vectorLength: 2 });
  return makeTileWindow(state.block, {
    view: makeTensorView(out, desc, { elementBytes }),
    lengths: [DSA_SPARSE_MLA_HEAD_BLOCK, columns],
    origin: [0, mul(state.wg, columns)],
    encoding: DSA_SPARSE_MLA_PV.cEncoding,
    originAlignment: [DSA_SPARSE_MLA_HEAD_BLOCK, columns],
  });
}
