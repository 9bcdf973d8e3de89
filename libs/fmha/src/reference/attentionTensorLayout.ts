import { ArgumentError } from '@tilekit/numeric';

/**
 * The order of an attention tensor's dimensions in memory (CK's `-iperm`/`-operm`): `bhsd` =
 * [batch][head][seq][dim] (perm 1), `bshd` = [batch][seq][head][dim] (perm 0). The head dim is
 * always contiguous.
 */
export const ATTENTION_LAYOUTS = ['bhsd', 'bshd'] as const;
export type AttentionLayout = (typeof ATTENTION_LAYOUTS)[number];

/**
 * Element strides of a Q/K/V/O tensor (the head dim has stride 1). Element (b, h, r, d) of batch
 * mode is at b·batch + h·head + r·row + d; in group mode, row r of batch b is global row
 * seqstart[b] + r and `batch` is unused: (seqstart[b] + r)·row + h·head + d.
 */
export interface AttentionTensorStrides {
  readonly batch: number;
  readonly head: number;
  readonly row: number;
}

/**
 * The packed strides of a tensor of `nhead` heads, `seqlen` rows per batch (group mode: the total
 * rows of all batches) and head dim `hdim` in `layout`.
 * Example: bshd, 8 heads, 100 rows, d 64 → { batch: 51200, head: 64, row: 512 }.
 */
export function packedAttentionStrides(layout: AttentionLayout, nhead: number, seqlen: number, hdim: number): AttentionTensorStrides {
  for (const [name, v] of [
    ['nhead', nhead],
    ['seqlen', seqlen],
    ['hdim', hdim],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new ArgumentError(name, 'must be a non-negative integer', v);
  }
  if (layout === 'bhsd') return Object.freeze({ batch: nhead * seqlen * hdim, head: seqlen * hdim, row: hdim });
  if (layout === 'bshd') return Object.freeze({ batch: seqlen * nhead * hdim, head: hdim, row: nhead * hdim });
  throw new ArgumentError('layout', `must be one of ${ATTENTION_LAYOUTS.join(', ')}`, layout);
}

/**
 * The number of elements a tensor spans: 1 + the largest offset it addresses (0 when it has no
 * element). `batches` rows-per-batch apply in batch mode; group mode passes batches = 1 and the
 * total rows.
 */
export function attentionTensorSpan(strides: AttentionTensorStrides, batches: number, nhead: number, rows: number, hdim: number): number {
  if (batches <= 0 || nhead <= 0 || rows <= 0 || hdim <= 0) return 0;
  return (batches - 1) * strides.batch + (nhead - 1) * strides.head + (rows - 1) * strides.row + hdim;
}
