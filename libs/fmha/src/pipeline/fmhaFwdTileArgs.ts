import type { Expr } from '@tilekit/codegen';
import type { TensorView } from '@tilekit/tile';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';

/**
 * What every forward pipeline needs of its block's query tile, whatever brings Q, K and V in
 * (TMA maps on sm_90a, global views on sm_80): the sequences, the mask, the scale and where O and
 * LSE go.
 */
export interface FmhaFwdTileArgs {
  /** `int` lengths of this block's sequences. */
  readonly seqlenQ: Expr;
  readonly seqlenK: Expr;
  /** `int` first query row of the block's tile. */
  readonly m0: Expr;
  /** `float` softmax scale · log2 e. */
  readonly scaleLog2: Expr;
  /** The mask over this block's sequences (the key range, edge tiles and the per-element predicate come from it). */
  readonly mask: GenericAttentionMaskCode;
  /** Restricts the key range to split `index` of `count` (split-KV); default: all keys. */
  readonly split?: { readonly count: Expr; readonly index: Expr };
  /** O as a [seqlenQ, headDimV] view (already offset to this batch and head) and the symbols its descriptor uses. */
  readonly o: TensorView;
  readonly symbols: Readonly<Record<string, Expr>>;
  /** `float*` of this (batch, head)'s LSE row 0 (stride 1): the kernel writes LSE where it is not null. */
  readonly lse?: Expr;
}
