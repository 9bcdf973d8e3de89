import { ArgumentError } from '@tilekit/numeric';

/**
 * Group-mode (varlen) sequence starts of per-sequence lengths: the exclusive prefix sums
 * `[0, l0, l0 + l1, …]`, one more entry than `lengths`. Postcondition (tested): entry i + 1 minus
 * entry i is lengths[i], and the first entry is 0.
 * @throws ArgumentError naming `lengths[i]` for a length that is not a non-negative safe integer.
 */
export function seqstartsOf(lengths: readonly number[]): number[] {
  const out = [0];
  lengths.forEach((l, i) => {
    if (!Number.isSafeInteger(l) || l < 0) throw new ArgumentError(`lengths[${i}]`, 'must be a non-negative integer', l);
    out.push(out[i]! + l);
  });
  return out;
}
