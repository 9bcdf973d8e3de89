// Random attention sequence shapes for the operators' randomized GPU specs (fmha forward and
// backward, Sparge): batch mode (1–3 batches of one (sq, sk) pair) or group mode (1–4 sequences,
// empty ones included), lengths from a set around the 64/128-row tiles plus a ragged 259, and a
// cost bound that keeps the CPU reference of a case cheap.
import fc from 'fast-check';

/** Sequence lengths the draws pick from (0 only in group mode). */
export const ATTENTION_RANDOM_SEQLENS: readonly number[] = Object.freeze([0, 1, 2, 17, 63, 64, 65, 127, 128, 129, 259]);

/** Sequences as drawn: batch mode one (sq, sk) for every batch, group mode one pair per batch. */
export interface AttentionRandomSequences {
  readonly group: boolean;
  readonly batch: number;
  readonly sq: readonly number[];
  readonly sk: readonly number[];
}

const lengthArb = (withZero: boolean): fc.Arbitrary<number> =>
  fc.constantFrom(...ATTENTION_RANDOM_SEQLENS.filter((l) => withZero || l > 0));

/** Batch mode (1–3 batches of one non-empty length pair) or group mode (1–4 pairs, empty ones included). */
export const attentionRandomSequencesArb: fc.Arbitrary<AttentionRandomSequences> = fc.oneof(
  fc
    .record({ batch: fc.integer({ min: 1, max: 3 }), sq: lengthArb(false), sk: lengthArb(false) })
    .map(({ batch, sq, sk }) => ({ group: false, batch, sq: [sq], sk: [sk] })),
  fc
    .array(fc.tuple(lengthArb(true), lengthArb(true)), { minLength: 1, maxLength: 4 })
    .map((pairs) => ({ group: true, batch: pairs.length, sq: pairs.map((p) => p[0]), sk: pairs.map((p) => p[1]) })),
);

/** CPU reference multiply-adds of drawn sequences: Σ over batches of heads·sq·sk·dims. */
export function attentionSequencesCost(s: AttentionRandomSequences, nheadQ: number, dims: number): number {
  return (s.group ? 1 : s.batch) * nheadQ * dims * s.sq.reduce((sum, sq, b) => sum + sq * s.sk[b]!, 0);
}

/**
 * Shortens the longest length to the next shorter one of the set until the cost is at most
 * `maxCost`. Postcondition: the cost fits, or every length is at most 1.
 */
export function fitAttentionSequencesToCost(
  s: AttentionRandomSequences,
  nheadQ: number,
  dims: number,
  maxCost: number,
): AttentionRandomSequences {
  let fitted = s;
  while (attentionSequencesCost(fitted, nheadQ, dims) > maxCost && Math.max(...fitted.sq, ...fitted.sk) > 1) {
    const longest = Math.max(...fitted.sq, ...fitted.sk);
    const shorter = [...ATTENTION_RANDOM_SEQLENS].reverse().find((l) => l > 0 && l < longest) ?? 1;
    const side = fitted.sq.includes(longest) ? 'sq' : 'sk';
    const i = fitted[side].indexOf(longest);
    fitted = { ...fitted, [side]: fitted[side].map((l, j) => (j === i ? shorter : l)) };
  }
  return fitted;
}
