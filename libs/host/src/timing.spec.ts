import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { gbPerSec, summarizeTimes, tflops } from './timing.ts';

describe('summarizeTimes', () => {
  it('golden: odd and even sample counts', () => {
    expect(summarizeTimes([3, 1, 2])).toEqual({ n: 3, min: 1, median: 2, mean: 2, max: 3, stddev: 1 });
    const even = summarizeTimes([4, 1, 3, 2]);
    expect(even).toMatchObject({ n: 4, min: 1, median: 2.5, mean: 2.5, max: 4 });
    expect(even.stddev).toBeCloseTo(Math.sqrt(5 / 3), 12);
    expect(summarizeTimes([0.125])).toEqual({ n: 1, min: 0.125, median: 0.125, mean: 0.125, max: 0.125, stddev: 0 });
  });

  const samples = fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { minLength: 1, maxLength: 50 });

  it('min <= median, mean <= max; stddev >= 0', () => {
    fc.assert(
      fc.property(samples, (ms) => {
        const s = summarizeTimes(ms);
        expect(s.n).toBe(ms.length);
        expect(s.min <= s.median && s.median <= s.max).toBe(true);
        expect(s.min <= s.mean && s.mean <= s.max).toBe(true);
        expect(s.stddev >= 0).toBe(true);
      }),
    );
  });

  it('does not depend on sample order', () => {
    fc.assert(
      fc.property(
        samples.chain((ms) => fc.tuple(fc.constant(ms), fc.shuffledSubarray(ms, { minLength: ms.length }))),
        ([ms, shuffled]) => {
          const a = summarizeTimes(ms);
          const b = summarizeTimes(shuffled);
          expect([b.min, b.median, b.max, b.n]).toEqual([a.min, a.median, a.max, a.n]);
        },
      ),
    );
  });

  it('rejects empty, negative and non-finite samples', () => {
    expect(() => summarizeTimes([])).toThrow('summarizeTimes: needs at least one sample (got [])');
    expect(() => summarizeTimes([1, -1])).toThrow(ArgumentError);
    expect(() => summarizeTimes([1, Number.NaN])).toThrow('samples must be finite and non-negative');
  });
});

describe('throughput', () => {
  it('converts flop and bytes per ms', () => {
    expect(tflops(2e12, 1000)).toBe(2);
    expect(tflops(4e9, 2)).toBe(2);
    expect(gbPerSec(3e9, 1000)).toBe(3);
    expect(() => tflops(1, 0)).toThrow('tflops: time must be a positive number of ms (got 0)');
    expect(() => gbPerSec(-1, 1)).toThrow(ArgumentError);
  });
});
