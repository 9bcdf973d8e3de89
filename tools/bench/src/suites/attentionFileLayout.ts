// How the attention ops' tensor files are laid out (tools/bench/REFERENCE_OPS.md: C-contiguous bhsd
// (b, heads, s, dim), bshd (b, s, heads, dim), or varlen (Σs, heads, dim)), and the same memory
// order as our kernels see it: element strides and the layout the problem names. A varlen file is
// group mode's bshd (row r of sequence i at global row seqstart[i] + r), so every file is uploaded
// as it is, without a copy.
import type { AttentionLayout, AttentionTensorStrides } from '@tilekit/fmha';

/** A tensor file's layout: packed bhsd or bshd, or varlen (the sequences' rows concatenated). */
export type AttentionFileLayout = 'bhsd' | 'bshd' | 'varlen';

/** One Q/K/V/O-like tensor: `rows` per batch (varlen: the total rows of every sequence; `batch` unused). */
export interface AttentionTensorDims {
  readonly batch: number;
  readonly heads: number;
  readonly rows: number;
  readonly hdim: number;
}

/** The file's shape: bhsd (batch, heads, rows, hdim), bshd (batch, rows, heads, hdim), varlen (rows, heads, hdim). */
export function attentionFileShape(layout: AttentionFileLayout, t: AttentionTensorDims): number[] {
  switch (layout) {
    case 'bhsd':
      return [t.batch, t.heads, t.rows, t.hdim];
    case 'bshd':
      return [t.batch, t.rows, t.heads, t.hdim];
    case 'varlen':
      return [t.rows, t.heads, t.hdim];
  }
}

/** Element strides of the C-contiguous file as (batch, head, row); the head dim has stride 1; varlen's batch is 0 (group mode). */
export function attentionFileStrides(layout: AttentionFileLayout, t: AttentionTensorDims): AttentionTensorStrides {
  switch (layout) {
    case 'bhsd':
      return { batch: t.heads * t.rows * t.hdim, head: t.rows * t.hdim, row: t.hdim };
    case 'bshd':
      return { batch: t.rows * t.heads * t.hdim, head: t.hdim, row: t.heads * t.hdim };
    case 'varlen':
      return { batch: 0, head: t.hdim, row: t.heads * t.hdim };
  }
}

/** An attention tensor's file as a suite expects it: dtype, C-contiguous shape, and the strides our kernels address it with. */
export interface AttentionTensorFile {
  readonly dtype: 'fp16' | 'bf16';
  readonly shape: readonly number[];
  readonly strides: AttentionTensorStrides;
}

/** The file of a tensor of `dims` in `layout` and `dtype`. */
export function attentionTensorFile(layout: AttentionFileLayout, dtype: 'fp16' | 'bf16', dims: AttentionTensorDims): AttentionTensorFile {
  return { dtype, shape: attentionFileShape(layout, dims), strides: attentionFileStrides(layout, dims) };
}

/** The bytes of such a file (fp16 and bf16 elements are 2 bytes). */
export function attentionFileBytes(file: AttentionTensorFile): number {
  return file.shape.reduce((n, d) => n * d, 2);
}

/** The layout our problem names for a file: its own, bshd for varlen (group mode's (Σs, heads, dim)). */
export function attentionKernelLayout(layout: AttentionFileLayout): AttentionLayout {
  return layout === 'varlen' ? 'bshd' : layout;
}
