import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SEED, Prng, SplitMix64, seedToUint64 } from './prng.ts';

const draws = (prng: Prng, n: number) => Array.from({ length: n }, () => prng.nextUint32());

describe('SplitMix64', () => {
  it('matches the published splitmix64.c vector for seed 1234567', () => {
    const sm = new SplitMix64(1234567);
    expect([sm.next(), sm.next(), sm.next(), sm.next(), sm.next()]).toEqual([
      6457827717110365317n,
      3203168211198807973n,
      9817491932198370423n,
      4593380528125082431n,
      16408922859458223821n,
    ]);
  });
});

describe('Prng (xoshiro128**)', () => {
  it('matches the published xoshiro128** vector from state [1,2,3,4]', () => {
    expect(draws(Prng.fromState([1, 2, 3, 4]), 10)).toEqual([
      11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597, 4258142804,
    ]);
  });

  it('seeds through SplitMix64 (golden streams, checked against a C build of both reference algorithms)', () => {
    expect(draws(new Prng(0), 6)).toEqual([3737715805, 2584255861, 2876756834, 3286328325, 1553311962, 1625202774]);
    expect(draws(new Prng(DEFAULT_SEED), 6)).toEqual([421473833, 2637552021, 3071009592, 4168360884, 2676572494, 333993460]);
    expect(draws(new Prng(-1), 6)).toEqual([477689756, 2493998634, 555695776, 607808419, 61340979, 301466976]);
    expect(draws(new Prng(2n ** 64n - 1n), 3)).toEqual(draws(new Prng(-1), 3));
  });

  it('same seed => same stream; clone continues it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (seed) => {
        const a = new Prng(seed);
        const b = new Prng(seed);
        expect(draws(a, 8)).toEqual(draws(b, 8));
        const c = a.clone();
        expect(draws(a, 8)).toEqual(draws(c, 8));
        expect(Prng.fromState(b.state()).nextUint32()).toBe(b.nextUint32());
      }),
    );
  });

  it('neighbouring seeds give different streams', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 20 }), (seed, step) => {
        expect(draws(new Prng(seed), 4)).not.toEqual(draws(new Prng(seed + step), 4));
      }),
    );
  });

  it('nextFloat lies in [0,1) and nextRange in [min, max)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (seed, min, width) => {
          const prng = new Prng(seed);
          for (let i = 0; i < 50; i++) {
            const u = prng.nextFloat();
            expect(u >= 0 && u < 1).toBe(true);
            const v = prng.nextRange(min, min + width);
            if (width === 0 || min + width === min) expect(v).toBe(min);
            else expect(v >= min && v < min + width).toBe(true);
          }
        },
      ),
    );
  });

  it('nextInt lies in [lo, hi] and is an integer', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed, lo, span) => {
        const prng = new Prng(seed);
        for (let i = 0; i < 20; i++) {
          const x = prng.nextInt(lo, lo + span);
          expect(Number.isInteger(x) && x >= lo && x <= lo + span).toBe(true);
        }
      }),
    );
  });

  it('nextInt covers a small range evenly', () => {
    const prng = new Prng(7);
    const counts = [0, 0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 70_000; i++) counts[prng.nextInt(-3, 3) + 3]! += 1;
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(400); // ~4σ
  });

  it('nextNormal has mean ≈ 0 and variance ≈ 1, and uses four draws per call', () => {
    const prng = new Prng(99);
    const n = 100_000;
    let sum = 0;
    let sumSq = 0;
    for (let i = 0; i < n; i++) {
      const x = prng.nextNormal();
      sum += x;
      sumSq += x * x;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.015);
    expect(Math.abs(sumSq / n - 1)).toBeLessThan(0.02);
    const a = new Prng(5);
    const b = new Prng(5);
    a.nextNormal();
    draws(b, 4);
    expect(a.nextUint32()).toBe(b.nextUint32());
  });

  it('rejects bad seeds, states and bounds with ArgumentError', () => {
    expect(() => new Prng(1.5)).toThrow(ArgumentError);
    expect(() => new Prng(1.5)).toThrow('seed: must be a safe integer or a bigint (got 1.5)');
    expect(() => Prng.fromState([0, 0, 0, 0])).toThrow('state: must not be all zero');
    expect(() => Prng.fromState([1, 2, 3, -1])).toThrow(ArgumentError);
    expect(() => new Prng(1).nextInt(3, 2)).toThrow('nextInt: bounds must be safe integers with lo <= hi (got [3,2])');
    expect(() => new Prng(1).nextInt(0, 2 ** 32)).toThrow(ArgumentError);
    expect(seedToUint64(-2)).toBe(2n ** 64n - 2n);
  });
});
