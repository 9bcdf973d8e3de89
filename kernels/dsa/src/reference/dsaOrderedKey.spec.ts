import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsaOrderedKey, dsaValueOfOrderedKey } from './dsaOrderedKey.ts';

/** fp32 values with every special but NaN: ±0, ±∞, subnormals, the extremes. */
const f32 = fc.float({ noNaN: true });
const specials = [
  Number.NEGATIVE_INFINITY,
  -3.4028234663852886e38,
  -1,
  -1.401298464324817e-45,
  -0,
  0,
  1.401298464324817e-45,
  1.1754942106924411e-38,
  1,
  Infinity,
];

describe('dsaOrderedKey', () => {
  it('maps golden values by the rule (negative: all bits inverted; otherwise: sign bit set)', () => {
    expect(dsaOrderedKey(Number.NEGATIVE_INFINITY)).toBe(0x007f_ffff); // ~0xff800000
    expect(dsaOrderedKey(-0)).toBe(0x7fff_ffff); // ~0x80000000
    expect(dsaOrderedKey(0)).toBe(0x8000_0000);
    expect(dsaOrderedKey(1)).toBe(0xbf80_0000); // 0x3f800000 | sign
    expect(dsaOrderedKey(-1)).toBe(0x407f_ffff); // ~0xbf800000
    expect(dsaOrderedKey(Infinity)).toBe(0xff80_0000);
    expect(dsaOrderedKey(1.401298464324817e-45)).toBe(0x8000_0001); // smallest subnormal
    expect(dsaOrderedKey(Number.NaN)).toBeGreaterThan(dsaOrderedKey(Infinity)); // V8 stores the positive quiet NaN
  });

  it('is strictly increasing on fp32 values, −0 just below +0, specials included', () => {
    fc.assert(
      fc.property(fc.oneof(f32, fc.constantFrom(...specials)), fc.oneof(f32, fc.constantFrom(...specials)), (x, y) => {
        const kx = dsaOrderedKey(x);
        const ky = dsaOrderedKey(y);
        if (x < y) expect(kx).toBeLessThan(ky);
        else if (x > y) expect(kx).toBeGreaterThan(ky);
        else if (Object.is(x, y)) expect(kx).toBe(ky);
        else expect(kx < ky).toBe(Object.is(x, -0)); // the zeros: −0 first
        expect(kx).toBeGreaterThanOrEqual(0);
        expect(kx).toBeLessThan(2 ** 32);
      }),
    );
  });

  it('sorts like the values (−0 before +0) when used as a sort key', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(f32, fc.constantFrom(...specials)), { maxLength: 40 }), (xs) => {
        const byKey = [...xs].sort((a, b) => dsaOrderedKey(a) - dsaOrderedKey(b));
        const byValue = [...xs].sort((a, b) => a - b || (Object.is(a, -0) ? -1 : 0) - (Object.is(b, -0) ? -1 : 0));
        expect(byKey).toEqual(byValue);
      }),
    );
  });

  it('round-trips every non-NaN fp32 value (sign of zero kept) and every key of a non-NaN value', () => {
    fc.assert(
      fc.property(f32, (x) => {
        expect(Object.is(dsaValueOfOrderedKey(dsaOrderedKey(x)), x)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (key) => {
        const value = dsaValueOfOrderedKey(key);
        fc.pre(!Number.isNaN(value));
        expect(dsaOrderedKey(value)).toBe(key);
      }),
    );
    for (const x of specials) expect(Object.is(dsaValueOfOrderedKey(dsaOrderedKey(x)), x)).toBe(true);
    expect(dsaValueOfOrderedKey(dsaOrderedKey(Number.NaN))).toBeNaN();
  });

  it('rounds a non-fp32 double to its fp32 value first', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, min: -3e38, max: 3e38 }), (x) => {
        expect(dsaOrderedKey(x)).toBe(dsaOrderedKey(Math.fround(x)));
      }),
    );
  });
});
