import { Prng } from '@tilekit/host';
import { dsaTopkReference } from '@tilekit/kernel-dsa';
import { describe, expect, it } from 'vitest';
import { dsaSelectedValues, dsaSelectionDifference, dsaTopkCheck, dsaTopkSelect } from './dsaTopkCheck.ts';

/** Rows drawn from a small pool of values (ties), with −∞ runs, NaN, ±0 and whole rows of −∞. */
function trickyRows(rows: number, rowStride: number, rng: Prng): Float32Array {
  const out = new Float32Array(rows * rowStride);
  for (let r = 0; r < rows; r++) {
    const pool = Float32Array.from({ length: 1 + rng.nextInt(0, 6) }, () => Math.fround(rng.nextNormal()));
    const masked = rng.nextFloat() < 0.1;
    for (let p = 0; p < rowStride; p++) {
      const u = rng.nextFloat();
      out[r * rowStride + p] = masked
        ? Number.NEGATIVE_INFINITY
        : u < 0.1
          ? Number.NEGATIVE_INFINITY
          : u < 0.13
            ? Number.NaN
            : u < 0.17
              ? -0
              : u < 0.21
                ? 0
                : pool[rng.nextInt(0, pool.length - 1)]!;
    }
  }
  return out;
}

describe('dsaTopkSelect', () => {
  it('equals dsaTopkReference (ties to the lower position, ascending, −1 padding) on rows with ties, −∞, NaN, ±0, short rows', () => {
    const rng = new Prng(20);
    for (const [rows, rowStride, k] of [
      [6, 1, 1],
      [5, 37, 1],
      [7, 64, 7],
      [9, 200, 64],
      [4, 50, 80],
      [3, 1000, 999],
    ] as const) {
      for (let trial = 0; trial < 4; trial++) {
        const logits = trickyRows(rows, rowStride, rng);
        expect(dsaTopkSelect(logits, rows, rowStride, k)).toEqual(dsaTopkReference({ logits, rows, rowStride, k }));
      }
    }
  });

  it('equals it on full-entropy rows at the bench shape (k 2048 of 8192)', () => {
    const rng = new Prng(7);
    const logits = Float32Array.from({ length: 2 * 8192 }, () => rng.nextNormal());
    expect(dsaTopkSelect(logits, 2, 8192, 2048)).toEqual(dsaTopkReference({ logits, rows: 2, rowStride: 8192, k: 2048 }));
  });

  it('refuses logits shorter than rows·rowStride', () => {
    expect(() => dsaTopkSelect(new Float32Array(5), 2, 3, 1)).toThrow(RangeError);
  });
});

describe('dsaTopkCheck: a wrong selection fails', () => {
  const rng = new Prng(3);
  const rows = 4;
  const L = 300;
  const k = 40;
  // Values from a pool of 25: the 40th largest of a row is tied with others (ties at the threshold).
  const logits = Float32Array.from({ length: rows * L }, () => Math.fround(Math.floor(rng.nextFloat() * 25) / 4));
  const right = dsaTopkSelect(logits, rows, L, k);

  it('the exact selection passes', () => {
    expect(dsaTopkCheck(logits, rows, L, k, right)).toEqual({
      ok: true,
      detail: "4 rows × top-40 equal dsaTopkReference's selection (ties to the lower position)",
    });
  });

  it('one position swapped for an unselected smaller one fails, naming the row and slot', () => {
    const wrong = right.slice();
    const row = 2;
    const kept = new Set(wrong.subarray(row * k, (row + 1) * k));
    const smallest = Math.min(...[...kept].map((p) => logits[row * L + p]!));
    const outsider = Array.from({ length: L }, (_, p) => p).find((p) => !kept.has(p) && logits[row * L + p]! < smallest)!;
    const slot = wrong.subarray(row * k, (row + 1) * k).findIndex((p) => logits[row * L + p] === smallest);
    wrong[row * k + slot] = outsider;
    wrong.subarray(row * k, (row + 1) * k).sort();
    const check = dsaTopkCheck(logits, rows, L, k, wrong);
    expect(check.ok).toBe(false);
    expect(check.detail).toMatch(/^1 of 4 rows differ from dsaTopkReference's selection; first: row 2 slot \d+/);
  });

  it('a tie at the threshold broken toward the higher position fails (torch.topk may do that; the kernel may not)', () => {
    const row = 1;
    const selected = right.subarray(row * k, (row + 1) * k);
    const threshold = Math.min(...[...selected].map((p) => logits[row * L + p]!));
    const tiedOutside = Array.from({ length: L }, (_, p) => p).filter((p) => !selected.includes(p) && logits[row * L + p] === threshold);
    expect(tiedOutside.length).toBeGreaterThan(0);
    const wrong = right.slice();
    const lastTied = [...selected].reverse().find((p) => logits[row * L + p] === threshold)!;
    wrong[row * k + selected.indexOf(lastTied)] = tiedOutside.at(-1)!;
    wrong.subarray(row * k, (row + 1) * k).sort();
    expect(dsaTopkCheck(logits, rows, L, k, wrong).ok).toBe(false);
    // The values it selected are the same: the server's check (torch.topk's values) cannot tell ties apart.
    expect(dsaSelectedValues(logits, L, wrong, k)).toEqual(dsaSelectedValues(logits, L, right, k));
  });

  it('the right set out of ascending order fails, and so does −1 padding where candidates remain', () => {
    const reordered = right.slice();
    [reordered[0], reordered[1]] = [reordered[1]!, reordered[0]!];
    expect(dsaTopkCheck(logits, rows, L, k, reordered).ok).toBe(false);
    const padded = right.slice();
    padded[k - 1] = -1;
    expect(dsaTopkCheck(logits, rows, L, k, padded).ok).toBe(false);
  });
});

describe('dsaSelectionDifference and dsaSelectedValues', () => {
  it('counts the differing rows and names the first entry; a length mismatch is every row', () => {
    const want = Int32Array.from([0, 1, 2, 3, 4, 5]);
    expect(dsaSelectionDifference(want.slice(), want, 2)).toEqual({ rows: 0 });
    expect(dsaSelectionDifference(Int32Array.from([0, 1, 2, 9, 4, 7]), want, 2)).toEqual({
      rows: 2,
      first: 'row 1 slot 1: got 9, expected 3',
    });
    expect(dsaSelectionDifference(Int32Array.from([0, 1]), want, 2)).toEqual({ rows: 3, first: '2 entries, expected 6' });
  });

  it('gives the picked logits sorted descending: −1 is −∞, a position outside the row NaN', () => {
    const logits = Float32Array.from([0.5, 2, -1, 3, /* row 1 */ 7, 6, 5, 4]);
    const values = dsaSelectedValues(logits, 4, Int32Array.from([0, 1, 3, /* row 1 */ 2, -1, 4]), 3);
    expect([...values]).toEqual([3, 2, 0.5, Number.NaN, 5, Number.NEGATIVE_INFINITY]);
  });
});
