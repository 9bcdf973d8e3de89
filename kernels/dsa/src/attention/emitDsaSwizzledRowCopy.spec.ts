import { describe, expect, it } from 'vitest';
import { DSA_SPARSE_MLA_QK } from './dsaSparseMlaGemms.ts';
import { DSA_SPARSE_MLA_K_SLAB_BYTES, DSA_SPARSE_MLA_Q_SLAB_BYTES } from './dsaSparseMlaSmem.ts';

/** The byte emitDsaSwizzledRowCopy writes column `col` of row `row` to, within one slab (its address formula, on the host). */
function rowCopyByte(row: number, col: number): number {
  return row * 128 + (((col >> 3) & 7) ^ (row & 7)) * 16 + (col % 8) * 2;
}

describe('emitDsaSwizzledRowCopy', () => {
  it("places every (row, column) of a slab where the Q·Kᵀ gemm's wgmma layouts (Q: A, keys: B) read it", () => {
    for (const [layout, slabBytes] of [
      [DSA_SPARSE_MLA_QK.aLayout, DSA_SPARSE_MLA_Q_SLAB_BYTES],
      [DSA_SPARSE_MLA_QK.bLayout, DSA_SPARSE_MLA_K_SLAB_BYTES],
    ] as const) {
      expect(layout.mn * layout.k * layout.elementBytes).toBe(slabBytes);
      for (let row = 0; row < layout.mn; row++)
        for (let col = 0; col < layout.k; col++) expect(layout.descriptor.calculateOffset([row, col]) * 2).toBe(rowCopyByte(row, col));
    }
  });
});
