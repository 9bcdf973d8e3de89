import { ArgumentError } from '@tilekit/numeric';

/**
 * A modification of the scaled score x = scale·⟨q_i, k_j⟩ before the softmax (what FlexAttention
 * calls a score_mod): logit soft-capping `cap·tanh(x / cap)` (Gemma 2) or ALiBi's linear bias
 * `x − slope_h·|i + seqlenK − seqlenQ − j|` (Press et al., "Train Short, Test Long"; the bottom-right
 * aligned form FlashAttention uses), with one slope per query head.
 */
export type AttentionScoreModifier =
  { readonly kind: 'softcap'; readonly cap: number } | { readonly kind: 'alibi'; readonly slopes: readonly number[] };

/** The modifier at one (sequence, query head): the modified logit of x at (i, j) and its derivative in x. */
export interface AttentionScoreAt {
  logit(x: number, i: number, j: number): number;
  derivative(x: number): number;
}

/** Checks `mod` against `nheadQ`; throws ArgumentError naming `scoreModifier` and the rule. */
export function checkAttentionScoreModifier(mod: AttentionScoreModifier | undefined, nheadQ: number): AttentionScoreModifier | undefined {
  if (mod === undefined) return undefined;
  if (mod.kind === 'softcap') {
    if (!(typeof mod.cap === 'number' && Number.isFinite(mod.cap) && mod.cap > 0))
      throw new ArgumentError('scoreModifier.cap', 'must be a finite number > 0', mod.cap);
    return mod;
  }
  if (mod.kind === 'alibi') {
    if (!Array.isArray(mod.slopes) || mod.slopes.length !== nheadQ || !mod.slopes.every((s) => Number.isFinite(s)))
      throw new ArgumentError('scoreModifier.slopes', `must be ${nheadQ} finite numbers (one per query head)`, mod.slopes);
    return mod;
  }
  throw new ArgumentError('scoreModifier.kind', 'must be "softcap" or "alibi"', (mod as { kind?: unknown }).kind);
}

/** `mod` at query head `h` of a sequence of `sq` query and `sk` key rows (identity when undefined). */
export function attentionScoreAt(mod: AttentionScoreModifier | undefined, h: number, sq: number, sk: number): AttentionScoreAt {
  if (mod === undefined) return { logit: (x) => x, derivative: () => 1 };
  if (mod.kind === 'softcap') {
    const cap = mod.cap;
    return {
      logit: (x) => cap * Math.tanh(x / cap),
      derivative: (x) => 1 - Math.tanh(x / cap) ** 2,
    };
  }
  const slope = mod.slopes[h]!;
  return { logit: (x, i, j) => x - slope * Math.abs(i + sk - sq - j), derivative: () => 1 };
}
