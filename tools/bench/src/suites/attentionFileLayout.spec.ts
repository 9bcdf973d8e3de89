import { fc, test } from '@fast-check/vitest';
import { packedAttentionStrides } from '@tilekit/fmha';
import { describe, expect, it } from 'vitest';
import {
  attentionFileBytes,
  attentionFileShape,
  attentionFileStrides,
  attentionKernelLayout,
  attentionTensorFile,
  type AttentionFileLayout,
  type AttentionTensorDims,
} from './attentionFileLayout.ts';

/** Offset of an element in a C-contiguous array of `shape`, from its index in each dimension. */
function cOffset(shape: readonly number[], index: readonly number[]): number {
  return index.reduce((offset, i, axis) => offset * shape[axis]! + i, 0);
}

/** The element (b, h, r, x)'s index in the file's dimensions, as REFERENCE_OPS.md orders them. */
function fileIndex(layout: AttentionFileLayout, b: number, h: number, r: number, x: number): number[] {
  if (layout === 'bhsd') return [b, h, r, x];
  if (layout === 'bshd') return [b, r, h, x];
  return [r, h, x];
}

const dims = fc.record({
  batch: fc.integer({ min: 1, max: 3 }),
  heads: fc.integer({ min: 1, max: 4 }),
  rows: fc.integer({ min: 1, max: 6 }),
  hdim: fc.integer({ min: 1, max: 5 }),
});

describe('attention tensor files', () => {
  it('shapes: bhsd (b, h, s, d), bshd (b, s, h, d), varlen (Σs, h, d)', () => {
    const t: AttentionTensorDims = { batch: 2, heads: 16, rows: 8192, hdim: 128 };
    expect(attentionFileShape('bhsd', t)).toEqual([2, 16, 8192, 128]);
    expect(attentionFileShape('bshd', t)).toEqual([2, 8192, 16, 128]);
    expect(attentionFileShape('varlen', { ...t, rows: 19624 })).toEqual([19624, 16, 128]);
    expect(attentionFileBytes(attentionTensorFile('bhsd', 'bf16', t))).toBe(2 * 16 * 8192 * 128 * 2);
  });

  test.prop([dims, fc.constantFrom<AttentionFileLayout>('bhsd', 'bshd', 'varlen')])(
    'the strides address every element where the C-contiguous file holds it (varlen: one batch of Σs rows, batch stride 0)',
    (t, layout) => {
      const shape = attentionFileShape(layout, t);
      const s = attentionFileStrides(layout, t);
      const batches = layout === 'varlen' ? 1 : t.batch;
      if (layout === 'varlen') expect(s.batch).toBe(0);
      for (let b = 0; b < batches; b++)
        for (let h = 0; h < t.heads; h++)
          for (let r = 0; r < t.rows; r++)
            for (let x = 0; x < t.hdim; x++)
              expect(b * s.batch + h * s.head + r * s.row + x).toBe(cOffset(shape, fileIndex(layout, b, h, r, x)));
      expect(attentionFileBytes({ dtype: 'fp16', shape, strides: s })).toBe(2 * batches * t.heads * t.rows * t.hdim);
    },
  );

  test.prop([dims, fc.constantFrom<AttentionFileLayout>('bhsd', 'bshd', 'varlen')])(
    "the strides are the packed ones of the layout our problem names: uploaded as they are (varlen: group mode's bshd, batch unused)",
    (t, layout) => {
      const ours = packedAttentionStrides(attentionKernelLayout(layout), t.heads, t.rows, t.hdim);
      const file = attentionFileStrides(layout, t);
      expect({ head: file.head, row: file.row }).toEqual({ head: ours.head, row: ours.row });
      if (layout !== 'varlen') expect(file.batch).toBe(ours.batch);
    },
  );

  it('kernel layouts: bhsd and bshd their own, varlen bshd', () => {
    expect(attentionKernelLayout('bhsd')).toBe('bhsd');
    expect(attentionKernelLayout('bshd')).toBe('bshd');
    expect(attentionKernelLayout('varlen')).toBe('bshd');
  });
});
