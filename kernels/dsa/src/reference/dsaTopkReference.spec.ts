import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { dsaRandomTopkLogits } from '../testing/dsaRandomInputs.ts';
import { dsaIsCandidate, dsaTopkReference } from './dsaTopkReference.ts';

/**
 * Independent oracle: k rounds of argmax over the not-yet-taken candidates (a strict > scan, so the lower
 * position wins a tie; −∞ and NaN never qualify), then ascending order and −1 padding.
 */
function bruteTopk(row: ArrayLike<number>, length: number, k: number): number[] {
  const taken = new Set<number>();
  for (let round = 0; round < k; round++) {
    let best = -1;
    for (let p = 0; p < length; p++) {
      const v = row[p]!;
      if (taken.has(p) || Number.isNaN(v) || v === Number.NEGATIVE_INFINITY) continue;
      if (best < 0 || v > row[best]!) best = p;
    }
    if (best < 0) break;
    taken.add(best);
  }
  const kept = [...taken].sort((a, b) => a - b);
  return [...kept, ...new Array<number>(k - kept.length).fill(-1)];
}

const one = (row: number[], k: number, length?: number): number[] =>
  Array.from(
    dsaTopkReference({
      logits: Float32Array.from(row),
      rows: 1,
      rowStride: row.length,
      k,
      ...(length === undefined ? {} : { lengths: [length] }),
    }),
  );

describe('dsaTopkReference', () => {
  it('keeps the k largest, lower position on ties, listed ascending (golden)', () => {
    expect(one([1, 3, 3, 2, 3], 2)).toEqual([1, 2]);
    expect(one([1, 3, 3, 2, 3], 3)).toEqual([1, 2, 4]);
    expect(one([5, 1, 4, 2], 2)).toEqual([0, 2]);
    expect(one([Infinity, 1, Infinity], 2)).toEqual([0, 2]);
    expect(one([-7, -3, -5], 1)).toEqual([1]);
    // −0 and +0 are equal values: the tie goes to the lower position (a radix select must key −0 as +0).
    expect(one([-0, 0], 1)).toEqual([0]);
    expect(one([0, -0], 1)).toEqual([0]);
  });

  it('never selects −∞ or NaN and pads with −1', () => {
    expect(one([Number.NEGATIVE_INFINITY, Number.NaN, 0.5, Number.NEGATIVE_INFINITY, -1], 3)).toEqual([2, 4, -1]);
    expect(one([Number.NaN, Number.NaN], 2)).toEqual([-1, -1]);
    expect(one([Number.NEGATIVE_INFINITY], 1)).toEqual([-1]);
    expect(dsaIsCandidate(Number.NaN)).toBe(false);
    expect(dsaIsCandidate(Number.NEGATIVE_INFINITY)).toBe(false);
    expect(dsaIsCandidate(-3.4e38)).toBe(true);
  });

  it('honours row lengths shorter than the stride and k larger than the row', () => {
    expect(one([5, 4, 3, 9, 9, 9], 2, 3)).toEqual([0, 1]);
    expect(one([2, 1], 4)).toEqual([0, 1, -1, -1]);
    expect(one([2, 1, 3], 2, 0)).toEqual([-1, -1]);
    const two = dsaTopkReference({
      logits: Float32Array.from([1, 2, 3, 3, 2, 1]),
      rows: 2,
      rowStride: 3,
      lengths: Int32Array.from([2, 3]),
      k: 2,
    });
    expect(Array.from(two)).toEqual([0, 1, 0, 1]);
  });

  it('matches repeated argmax on rows with ties, −∞ runs and NaNs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 40 }),
        (seed, rows, rowStride, k, distinctValues) => {
          const rng = new Prng(seed);
          const logits = dsaRandomTopkLogits(rows, rowStride, rng, { distinctValues, negInfRunRate: 0.05, nanRate: 0.05 });
          const lengths = Int32Array.from({ length: rows }, () => rng.nextInt(0, rowStride));
          const out = dsaTopkReference({ logits, rows, rowStride, lengths, k });
          for (let r = 0; r < rows; r++) {
            expect(Array.from(out.subarray(r * k, (r + 1) * k))).toEqual(bruteTopk(logits.subarray(r * rowStride), lengths[r]!, k));
          }
        },
      ),
    );
  });

  it('selects a set that dominates: every kept value ≥ every dropped candidate, ties dropped only above the kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(-2, -1, -0, 0, 1, 2, Infinity, Number.NEGATIVE_INFINITY, Number.NaN), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 70 }),
        (row, k) => {
          const kept = one(row, k).filter((p) => p >= 0);
          const candidates = row.flatMap((v, p) => (dsaIsCandidate(v) ? [p] : []));
          expect(kept.length).toBe(Math.min(k, candidates.length));
          for (let j = 1; j < kept.length; j++) expect(kept[j]!).toBeGreaterThan(kept[j - 1]!);
          for (const p of candidates.filter((c) => !kept.includes(c))) {
            for (const q of kept) {
              expect(row[q]!).toBeGreaterThanOrEqual(row[p]!);
              if (row[q] === row[p]) expect(q).toBeLessThan(p);
            }
          }
        },
      ),
    );
  });
});
