import type { BlockBuilder, Expr, KernelParams } from '@tilekit/codegen';

/**
 * A score modifier at one query head: what the pipelines call per element of a score tile
 * (FlexAttention's score_mod, fixed at compile time). Row and key indices are sequence-local.
 */
export interface FmhaScoreAt {
  /**
   * The log2-domain logit of the raw score `s` (an element of Q·Kᵀ) of query `row` and key `col`,
   * given `scaleLog2` (softmax scale · log2 e, int8 dequantization scales joined): the value the
   * online softmax then takes with scale 1.
   */
  logit(b: BlockBuilder, s: Expr, row: Expr, col: Expr, scaleLog2: Expr): Expr;
  /**
   * Backward: d logit / d (scale·s) at an element whose probability is `p` (fp32) in a row whose
   * LSE·log2 e is `lseLog2`; absent when it is 1 (a bias).
   */
  gradient?(b: BlockBuilder, p: Expr, lseLog2: Expr): Expr;
}

/** A modifier bound to a kernel's parameter values and its block's sequences. */
export interface FmhaScoreModifierSite {
  /** Emits what query head `head` needs once (a slope load) and returns the per-element hook there. */
  atHead(b: BlockBuilder, head: Expr): FmhaScoreAt;
}

/** The score modifiers there are: soft-capping and ALiBi. */
export type FmhaScoreModifierKind = 'softcap' | 'alibi';

/** The score modifiers there are, as a list (for checks). */
export const FMHA_SCORE_MODIFIER_KINDS: readonly FmhaScoreModifierKind[] = Object.freeze(['softcap', 'alibi']);

/** What the host passes for a modifier: soft-capping's cap, or ALiBi's device array of one fp32 slope per query head. */
export type FmhaScoreModifierSpec =
  | { readonly kind: 'softcap'; readonly cap: number }
  | { readonly kind: 'alibi'; readonly slopes: { readonly ptr: bigint; readonly bytes: number } };

/**
 * A score modifier of the attention pipelines, the hook a policy carries: the kernel parameters it
 * adds (after the kernel's own), the emitter side over their values, and the host side that turns
 * a spec into those values.
 */
export interface FmhaScoreModifier {
  /** Instance-name tag (`softcap`, `alibi`). */
  readonly tag: FmhaScoreModifierSpec['kind'];
  params(): KernelParams;
  bind(values: Readonly<Record<string, Expr>>, seq: { readonly seqlenQ: Expr; readonly seqlenK: Expr }): FmhaScoreModifierSite;
  /** The values of `params()` for `spec` on a problem of `nheadQ` query heads; throws ArgumentError naming the field and the rule. */
  argValues(spec: FmhaScoreModifierSpec | undefined, nheadQ: number): Readonly<Record<string, number | bigint>>;
}
