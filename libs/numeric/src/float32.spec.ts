// IEEE binary32: golden patterns, and the generic exact codec against the engine's Math.fround.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, encode, roundTo } from './conversion.ts';
import { float32Format } from './float32.ts';
import { float32BitsOf } from './float64Bits.ts';
import { decodeFloatBits, encodeFloatBits } from './floatFormat.ts';
import { nextDown, nextUp } from './testing/float64Neighbours.ts';

const FLOAT32_MAX = (2 - 2 ** -23) * 2 ** 127;

describe('fp32 golden patterns', () => {
  it.each([
    [1, 0x3f800000],
    [-2, 0xc0000000],
    [FLOAT32_MAX, 0x7f7fffff],
    [2 ** -126, 0x00800000],
    [2 ** -149, 0x00000001],
    [-0, 0x80000000],
    [Infinity, 0x7f800000],
    [-Infinity, 0xff800000],
  ])('%d ↔ %i', (value, bits) => {
    expect(encode('fp32', value)).toBe(bits);
    expect(Object.is(decode('fp32', bits), value)).toBe(true);
  });

  it('canonicalises NaN to 0x7FC00000', () => {
    expect(encode('fp32', NaN)).toBe(0x7fc00000);
    expect(decode('fp32', 0xffc00001)).toBeNaN();
  });

  it('rounds ties to even, and toward zero on request', () => {
    expect(encode('fp32', 1 + 2 ** -24)).toBe(0x3f800000);
    expect(encode('fp32', 1 + 3 * 2 ** -24)).toBe(0x3f800002);
    expect(encode('fp32', 1 + 3 * 2 ** -24, { rounding: 'towardZero' })).toBe(0x3f800001);
    expect(encode('fp32', -(1 + 3 * 2 ** -24), { rounding: 'towardZero' })).toBe(0xbf800001);
  });

  it('overflows to Inf at max + ½ulp, to max when saturating or truncating', () => {
    const tie = FLOAT32_MAX + 2 ** 103;
    expect(encode('fp32', nextDown(tie))).toBe(0x7f7fffff);
    expect(encode('fp32', tie)).toBe(0x7f800000);
    expect(encode('fp32', -tie, { saturate: true })).toBe(0xff7fffff);
    expect(encode('fp32', Infinity, { saturate: true })).toBe(0x7f7fffff);
    expect(encode('fp32', 1e300, { rounding: 'towardZero' })).toBe(0x7f7fffff);
    expect(encode('fp32', Infinity, { rounding: 'towardZero' })).toBe(0x7f800000);
  });
});

describe('fp32 generic codec', () => {
  const anyDouble = fc.oneof(
    fc.double(),
    fc.double({ min: -(2 ** -120), max: 2 ** -120 }),
    fc.double({ min: -4 * FLOAT32_MAX, max: 4 * FLOAT32_MAX }),
  );

  it('agrees with Math.fround (the engine rounds to nearest even) on arbitrary doubles', () => {
    fc.assert(
      fc.property(anyDouble, (x) => {
        const expected = Number.isNaN(x) ? float32Format.canonicalNaN : float32BitsOf(Math.fround(x));
        expect(encodeFloatBits(float32Format, x, false, 'nearestEven')).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('decodes like a Float32Array', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (bits) => {
        const f32 = new Float32Array(new Uint32Array([bits]).buffer)[0]!;
        const ours = decodeFloatBits(float32Format, bits);
        expect(Number.isNaN(ours) ? Number.isNaN(f32) : Object.is(ours, f32)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('truncates to Math.fround or its neighbour toward zero, never growing |x|', () => {
    fc.assert(
      fc.property(
        anyDouble.filter((x) => Number.isFinite(x)),
        (x) => {
          const t = roundTo('fp32', x, { rounding: 'towardZero' });
          const r = Math.fround(x);
          expect(Math.abs(t)).toBeLessThanOrEqual(Math.abs(x));
          if (Math.abs(r) <= Math.abs(x)) expect(t).toBe(r);
          else expect(Math.abs(t)).toBe(Math.abs(decode('fp32', encode('fp32', r) - 1)));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

it('nextUp/nextDown are the float64 neighbours', () => {
  expect(nextUp(1)).toBe(1 + 2 ** -52);
  expect(nextDown(1)).toBe(1 - 2 ** -53);
  expect(nextUp(-1)).toBe(-1 + 2 ** -53);
  expect(nextUp(0)).toBe(Number.MIN_VALUE);
  expect(nextDown(0)).toBe(-Number.MIN_VALUE);
});
