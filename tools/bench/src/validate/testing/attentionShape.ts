/**
 * The shape of the synthetic attention cases: one batch, `heads` heads (no GQA), sq query rows,
 * sk keys, head dim d for Q, K and V; tensors are packed heads × rows × d (bhsd, b = 1).
 */
export interface AttentionShape {
  readonly heads: number;
  readonly sq: number;
  readonly sk: number;
  readonly d: number;
  readonly scale: number;
}

/** The keys row i keeps: [lo, hi). */
export type KeyRange = (row: number) => readonly [number, number];

/** Every key of a row. */
export const allKeys =
  (sk: number): KeyRange =>
  () => [0, sk];

/** Causal with sq = sk (top-left and bottom-right agree): row i keeps keys 0..i, shifted by `offBy` (a bug model when ≠ 0). */
export const causalKeys =
  (sk: number, offBy = 0): KeyRange =>
  (row) => [0, Math.max(0, Math.min(sk, row + 1 + offBy))];
