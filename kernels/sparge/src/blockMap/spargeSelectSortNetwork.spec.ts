import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spargeSelectRow } from '../spargeBlockMapReference.ts';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import {
  SPARGE_SELECT_MAX_KEY_BLOCKS,
  SPARGE_SELECT_NO_CANDIDATE,
  spargeSelectBitonicSort,
  spargeSelectDecodeKey,
  spargeSelectSortKey,
  spargeSelectSortLength,
} from './spargeSelectSortNetwork.ts';

const f32 = fc.float({ noNaN: true });

describe('spargeSelectSortKey', () => {
  it('orders by score descending, then block index ascending (the tie rule of spargeSelectRow)', () => {
    fc.assert(
      fc.property(f32, f32, fc.nat(5000), fc.nat(5000), (a, b, i, j) => {
        fc.pre(i !== j);
        const before = spargeSelectSortKey(a, i) < spargeSelectSortKey(b, j);
        expect(before).toBe(a > b || (a === b && i < j));
      }),
    );
  });

  it('is decoded back to the score (−0 as +0) and index, and never equals the no-candidate key', () => {
    fc.assert(
      fc.property(f32, fc.nat(2 ** 32 - 2), (s, i) => {
        const key = spargeSelectSortKey(s, i);
        expect(spargeSelectDecodeKey(key)).toEqual({ score: s === 0 ? 0 : s, index: i });
        expect(key).not.toBe(SPARGE_SELECT_NO_CANDIDATE);
      }),
    );
  });

  it('treats −0 and +0 as a tie', () => {
    expect(spargeSelectSortKey(-0, 3) > spargeSelectSortKey(0, 2)).toBe(true);
    expect(spargeSelectSortKey(-0, 1) < spargeSelectSortKey(0, 2)).toBe(true);
  });

  it('rejects NaN scores and bad indices with a typed error', () => {
    expect(() => spargeSelectSortKey(NaN, 0)).toThrow(SpargeArgumentError);
    expect(() => spargeSelectSortKey(1, -1)).toThrow(/index/);
    expect(() => spargeSelectSortKey(1, 2 ** 32 - 1)).toThrow(/index/);
  });
});

describe('spargeSelectBitonicSort (the kernel network)', () => {
  it('sorts every segment ascending, as a permutation of itself', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { minLength: 512, maxLength: 512 }),
        (log2, segments, pool) => {
          const length = 2 ** log2;
          const keys = BigUint64Array.from(pool.slice(0, length * segments));
          const want = Array.from({ length: segments }, (_, s) =>
            Array.from(keys.subarray(s * length, (s + 1) * length)).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
          );
          spargeSelectBitonicSort(keys, length);
          expect(Array.from({ length: segments }, (_, s) => Array.from(keys.subarray(s * length, (s + 1) * length)))).toEqual(want);
        },
      ),
    );
  });

  it("gives spargeSelectRow's candidate order for rows with ties and non-candidates", () => {
    const row = fc.array(
      fc.oneof(
        fc.constant(-Infinity),
        fc.integer({ min: -3, max: 3 }).map((x) => x / 2),
        fc.float({ noNaN: true, noDefaultInfinity: true }),
      ),
      { minLength: 1, maxLength: 70 },
    );
    fc.assert(
      fc.property(row, (values) => {
        const scores = Float64Array.from(values, (v) => Math.fround(v));
        const length = spargeSelectSortLength(scores.length);
        const keys = new BigUint64Array(length).fill(SPARGE_SELECT_NO_CANDIDATE);
        scores.forEach((s, j) => {
          if (s !== -Infinity) keys[j] = spargeSelectSortKey(s, j);
        });
        spargeSelectBitonicSort(keys, length);
        const order = Array.from(keys)
          .filter((k) => k !== SPARGE_SELECT_NO_CANDIDATE)
          .map((k) => spargeSelectDecodeKey(k).index);
        // Every prefix the GPU keeps is the set spargeSelectRow keeps for that count.
        for (let n = 1; n <= order.length; n++) {
          const cpu = spargeSelectRow(scores, 'topk', n / scores.length).selected;
          expect([...order.slice(0, n)].sort((x, y) => x - y)).toEqual(cpu);
        }
      }),
    );
  });

  it('rejects a length that is not a power of two or keys that are not whole segments', () => {
    expect(() => spargeSelectBitonicSort(new BigUint64Array(6), 3)).toThrow(/power of two/);
    expect(() => spargeSelectBitonicSort(new BigUint64Array(6), 4)).toThrow(/whole segments/);
  });
});

describe('spargeSelectSortLength', () => {
  it('is the least power of two ≥ kBlocks, capped at the kernel capacity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: SPARGE_SELECT_MAX_KEY_BLOCKS }), (k) => {
        const p = spargeSelectSortLength(k);
        expect(p >= k && p / 2 < k && (p & (p - 1)) === 0).toBe(true);
      }),
    );
    expect(spargeSelectSortLength(0)).toBe(1);
    expect(() => spargeSelectSortLength(SPARGE_SELECT_MAX_KEY_BLOCKS + 1)).toThrow(SpargeArgumentError);
  });
});
