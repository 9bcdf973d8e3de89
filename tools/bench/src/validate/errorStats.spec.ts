import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { errorStats, referenceStats } from './errorStats.ts';

// Zero or a normal magnitude in [1e-12, 1e6] of either sign (scaling by 2^±30 stays exact).
const value = fc.oneof(
  fc.constant(0),
  fc.tuple(fc.double({ min: 1e-12, max: 1e6, noNaN: true }), fc.boolean()).map(([x, negative]) => (negative ? -x : x)),
);
const pair = fc
  .integer({ min: 1, max: 40 })
  .chain((n) => fc.tuple(fc.array(value, { minLength: n, maxLength: n }), fc.array(value, { minLength: n, maxLength: n })));
const maxAbsOf = (xs: readonly number[]): number => xs.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

describe('errorStats', () => {
  it('is max |got − want| and sqrt(mean((got − want)²))', () => {
    expect(errorStats([1, 2, 3], [1, 2, 5])).toEqual({ maxAbs: 2, rms: Math.sqrt(4 / 3) });
    expect(errorStats(new Float32Array([0.5, -0.5]), new Float64Array([0, 0]))).toEqual({ maxAbs: 0.5, rms: 0.5 });
  });

  it('neither underflows nor overflows on tiny or huge errors', () => {
    expect(errorStats([1e-200, 0], [0, 0])).toEqual({ maxAbs: 1e-200, rms: 1e-200 / Math.SQRT2 });
    expect(errorStats([1e300, -1e300], [0, 0])).toEqual({ maxAbs: 1e300, rms: 1e300 });
  });

  it('is zero for empty arrays and for x against itself', () => {
    expect(errorStats([], [])).toEqual({ maxAbs: 0, rms: 0 });
    fc.assert(
      fc.property(fc.array(value), (x) => {
        expect(errorStats(x, x)).toEqual({ maxAbs: 0, rms: 0 });
      }),
    );
  });

  it('is symmetric', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(errorStats(a, b)).toEqual(errorStats(b, a));
      }),
    );
  });

  it('scales by |c| when both sides scale by c (exactly for powers of two)', () => {
    const power = fc.tuple(fc.integer({ min: -30, max: 30 }), fc.boolean()).map(([k, negative]) => (negative ? -1 : 1) * 2 ** k);
    fc.assert(
      fc.property(pair, power, ([a, b], c) => {
        const e = errorStats(a, b);
        expect(
          errorStats(
            a.map((x) => c * x),
            b.map((x) => c * x),
          ),
        ).toEqual({ maxAbs: Math.abs(c) * e.maxAbs, rms: Math.abs(c) * e.rms });
      }),
    );
    fc.assert(
      fc.property(
        pair,
        fc.tuple(fc.double({ min: 1e-3, max: 1e3, noNaN: true }), fc.boolean()).map(([x, negative]) => (negative ? -x : x)),
        ([a, b], c) => {
          const e = errorStats(a, b);
          const s = errorStats(
            a.map((x) => c * x),
            b.map((x) => c * x),
          );
          const slack = 1e-14 * Math.abs(c) * (maxAbsOf(a) + maxAbsOf(b));
          expect(Math.abs(s.maxAbs - Math.abs(c) * e.maxAbs)).toBeLessThanOrEqual(slack);
          expect(Math.abs(s.rms - Math.abs(c) * e.rms)).toBeLessThanOrEqual(slack);
        },
      ),
    );
  });

  it('has maxAbs/√n ≤ rms ≤ maxAbs', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const { maxAbs, rms } = errorStats(a, b);
        expect(rms).toBeLessThanOrEqual(maxAbs * (1 + 1e-15));
        expect(rms).toBeGreaterThanOrEqual((maxAbs / Math.sqrt(a.length)) * (1 - 1e-15));
      }),
    );
  });

  it('makes both Infinity when got holds NaN or ±Inf anywhere', () => {
    const bad = fc.constantFrom(NaN, Infinity, -Infinity);
    fc.assert(
      fc.property(pair, bad, fc.nat(), ([a, b], x, at) => {
        const got = a.slice();
        got[at % got.length] = x;
        expect(errorStats(got, b)).toEqual({ maxAbs: Infinity, rms: Infinity });
      }),
    );
  });

  it('rejects a length mismatch naming got, and a non-finite reference naming want', () => {
    expect(() => errorStats([1, 2], [1])).toThrow(ArgumentError);
    expect(() => errorStats([1, 2], [1])).toThrow(expect.objectContaining({ argument: 'got' }));
    expect(() => errorStats([1], [NaN])).toThrow(expect.objectContaining({ argument: 'want' }));
  });
});

describe('referenceStats', () => {
  it('is max |want| and sqrt(mean(want²)): the error of zeros against want', () => {
    expect(referenceStats([])).toEqual({ maxAbs: 0, rms: 0 });
    expect(referenceStats([3, -4])).toEqual({ maxAbs: 4, rms: Math.sqrt(12.5) });
    fc.assert(
      fc.property(fc.array(value), (w) => {
        expect(referenceStats(w)).toEqual(errorStats(new Float64Array(w.length), w));
      }),
    );
  });

  it('rejects a non-finite reference naming want', () => {
    expect(() => referenceStats([1, Infinity])).toThrow(expect.objectContaining({ argument: 'want' }));
  });
});
