// What a forward attention launch needs to know of its problem, every default filled in: the part
// of a checked problem the launchers (dense, sparse, sm_90a and sm_80) read.
import type { CheckedAttentionProblem } from '../problem/checkedAttentionProblem.ts';
import type { AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { FmhaScoreModifierKind } from '../scoreMod/fmhaScoreModifier.ts';

/** Batch mode (every sequence the same length) or group mode (varlen: `seqstartQ`/`seqstartK`). */
export type FmhaFwdMode = 'batch' | 'group';

/**
 * What a launch needs to know of the problem (every default already filled in): shapes, element
 * strides of Q/K/V/O (`AttentionTensorStrides`: batch, head, row; the head dim contiguous), the LSE
 * layout (per batch and head, rows contiguous), the mask and the scale.
 */
export interface FmhaFwdLaunchProblem extends CheckedAttentionProblem {
  readonly dtype: 'fp16' | 'bf16';
  readonly mode: FmhaFwdMode;
  readonly qStrides: AttentionTensorStrides;
  readonly kStrides: AttentionTensorStrides;
  readonly vStrides: AttentionTensorStrides;
  readonly oStrides: AttentionTensorStrides;
  /** Writes LSE (fp32, natural log) at lse[b·lseStrides.batch + h·lseStrides.head + row]; group mode reads the key rows from `seqstartK`. */
  readonly lse: boolean;
  /** Key splits (1: no split-KV). */
  readonly numSplits: number;
  /** The score modifier the kernel must apply (its values come with the buffers); default none. */
  readonly scoreModifier?: FmhaScoreModifierKind;
}
