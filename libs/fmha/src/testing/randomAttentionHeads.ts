// Random GQA head counts for the operators' randomized GPU specs (fmha forward and backward, Sparge).
import fc from 'fast-check';

/** GQA heads as drawn: nheadK key/value heads, each shared by `ratio` query heads. */
export interface AttentionRandomHeads {
  readonly nheadK: number;
  readonly ratio: number;
}

/**
 * The record fields of the heads (nheadK 1–2, ratio 1–4), spread into a problem's `fc.record` in
 * this order (the draw order of the recorded seeds).
 */
export const attentionRandomHeadsFields: { readonly [K in keyof AttentionRandomHeads]: fc.Arbitrary<AttentionRandomHeads[K]> } = {
  nheadK: fc.integer({ min: 1, max: 2 }),
  ratio: fc.integer({ min: 1, max: 4 }),
};

/** The query heads of drawn heads: nheadK·ratio. */
export function attentionRandomNheadQ(h: AttentionRandomHeads): number {
  return h.nheadK * h.ratio;
}
