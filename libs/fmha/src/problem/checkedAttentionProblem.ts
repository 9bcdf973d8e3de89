// The resolved shape every checked attention problem shares (forward, backward and the forward's
// launch problem): one definition, so the kernels agree on what "rows", "seqlen" and the LSE
// layout mean.
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import type { AttentionSequences } from './attentionProblemChecks.ts';

/** Batch (equal sequences) or group (varlen, cumulative seqstart) mode. */
export type AttentionProblemMode = 'batch' | 'group';

/** LSE (and the backward's D) element (b, h, row) at b·batch + h·head + row (group mode: row global, batch 0). */
export interface AttentionLseStrides {
  readonly batch: number;
  readonly head: number;
}

/** An attention problem with every default filled in: shapes, mode, LSE layout, mask and scale. */
export interface CheckedAttentionProblem {
  readonly mode: AttentionProblemMode;
  readonly batch: number;
  readonly nheadQ: number;
  readonly nheadK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  /** Batch mode: rows per sequence; group mode: the longest query sequence (the grid size). */
  readonly seqlenQ: number;
  /** Batch mode: keys per sequence; group mode: the longest key sequence used. */
  readonly seqlenK: number;
  /** Rows of Q and of K/V per head in the tensors: batch mode the seqlens, group mode the totals. */
  readonly rowsQ: number;
  readonly rowsK: number;
  readonly lseStrides: AttentionLseStrides;
  /** Softmax scale, already rounded to fp32. */
  readonly scale: number;
  readonly mask: AttentionMaskSpec;
}

/** LSE rows contiguous per (batch, head): head stride rowsQ, batch stride nheadQ·rowsQ (0 in group mode). */
export function attentionLseStrides(mode: AttentionProblemMode, nheadQ: number, rowsQ: number): AttentionLseStrides {
  return Object.freeze({ batch: mode === 'group' ? 0 : nheadQ * rowsQ, head: rowsQ });
}

/**
 * The shared part of a checked problem from its checked pieces: the heads, the head dims, the
 * resolved sequences (only mode, seqlens and rows are taken) and the softmax's scale and mask; the
 * LSE strides follow from them (`attentionLseStrides`). Each operator spreads it into its own
 * frozen problem.
 */
export function checkedAttentionProblem(
  heads: { readonly batch: number; readonly nheadQ: number; readonly nheadK: number },
  hdims: { readonly hdimQ: number; readonly hdimV: number },
  sequences: AttentionSequences,
  softmax: { readonly scale: number; readonly mask: AttentionMaskSpec },
): CheckedAttentionProblem {
  const { mode, seqlenQ, seqlenK, rowsQ, rowsK } = sequences;
  const { batch, nheadQ, nheadK } = heads;
  return {
    mode,
    batch,
    nheadQ,
    nheadK,
    hdimQ: hdims.hdimQ,
    hdimV: hdims.hdimV,
    seqlenQ,
    seqlenK,
    rowsQ,
    rowsK,
    lseStrides: attentionLseStrides(mode, nheadQ, rowsQ),
    scale: softmax.scale,
    mask: softmax.mask,
  };
}
