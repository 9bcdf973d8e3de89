// Integer conversions: rounding, saturation, wrapping, NaN, and the bigint path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, decodeBigInt, encode, encodeBigInt, roundTo } from './conversion.ts';
import { roundToInteger } from './integer.ts';
import { ArgumentError } from './tilekitError.ts';

describe('integer encode/decode', () => {
  it('uses two’s-complement bit patterns', () => {
    expect(encode('int8', -1)).toBe(0xff);
    expect(encode('int8', -128)).toBe(0x80);
    expect(encode('int8', 127)).toBe(0x7f);
    expect(encode('uint8', 255)).toBe(0xff);
    expect(encode('int32', -1)).toBe(0xffffffff);
    expect(encode('int32', -(2 ** 31))).toBe(0x80000000);
    expect(decode('int8', 0xff)).toBe(-1);
    expect(decode('uint8', 0xff)).toBe(255);
    expect(decode('int32', 0x80000000)).toBe(-(2 ** 31));
  });

  it('truncates by default (like a C cast) and rounds to nearest even on request', () => {
    expect(roundTo('int8', 2.7)).toBe(2);
    expect(roundTo('int8', -2.7)).toBe(-2);
    expect(roundTo('int8', 2.5, { rounding: 'nearestEven' })).toBe(2);
    expect(roundTo('int8', 3.5, { rounding: 'nearestEven' })).toBe(4);
    expect(roundTo('int8', -2.5, { rounding: 'nearestEven' })).toBe(-2);
    expect(roundTo('int8', -0.5, { rounding: 'nearestEven' })).toBe(0);
    expect(Object.is(roundTo('int8', -0.4), 0)).toBe(true); // never -0
  });

  it('saturates by default (NaN → 0), wraps modulo 2^bits when saturate is false', () => {
    expect(roundTo('int8', 300)).toBe(127);
    expect(roundTo('int8', -Infinity)).toBe(-128);
    expect(roundTo('uint8', -5)).toBe(0);
    expect(roundTo('int32', 1e12)).toBe(2 ** 31 - 1);
    expect(roundTo('int8', NaN)).toBe(0);
    expect(roundTo('int8', 300, { saturate: false })).toBe(44);
    expect(roundTo('int8', -129, { saturate: false })).toBe(127);
    expect(roundTo('uint8', -1, { saturate: false })).toBe(255);
    expect(roundTo('int32', 2 ** 31, { saturate: false })).toBe(-(2 ** 31));
    expect(roundTo('int8', Infinity, { saturate: false })).toBe(0);
    expect(roundTo('uint8', NaN, { saturate: false })).toBe(0);
  });

  it('wrapping agrees with JavaScript’s ToInt32 / ToUint8 on integers', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), (n) => {
        expect(roundTo('int32', n, { saturate: false })).toBe(n | 0);
        expect(roundTo('uint8', n, { saturate: false })).toBe(new Uint8Array([n])[0]);
        expect(roundTo('int8', n, { saturate: false })).toBe(new Int8Array([n])[0]);
      }),
    );
  });

  it('nearestEven rounding is within ½ and ties go to even', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), (x) => {
        const n = roundToInteger(x, 'nearestEven');
        expect(Math.abs(n - x)).toBeLessThanOrEqual(0.5);
        if (Math.abs(n - x) === 0.5) expect(Math.abs(n % 2)).toBe(0);
        expect(Math.abs(roundToInteger(x, 'towardZero'))).toBeLessThanOrEqual(Math.abs(x));
      }),
    );
  });

  it('rejects int64 patterns as numbers, pointing at the bigint functions', () => {
    expect(() => encode('int64', 1)).toThrow(ArgumentError);
    expect(() => encode('int64', 1)).toThrow(/encodeBigInt/);
    expect(() => decode('int64', 1)).toThrow(/decodeBigInt/);
  });
});

describe('encodeBigInt / decodeBigInt', () => {
  it('gives unsigned patterns and signed values', () => {
    expect(encodeBigInt('int64', -1)).toBe(2n ** 64n - 1n);
    expect(encodeBigInt('int64', -1n)).toBe(2n ** 64n - 1n);
    expect(decodeBigInt('int64', 2n ** 64n - 1n)).toBe(-1n);
    expect(decodeBigInt('int64', 2n ** 63n)).toBe(-(2n ** 63n));
    expect(encodeBigInt('int8', -2)).toBe(0xfen);
    expect(decodeBigInt('uint8', 0xfen)).toBe(254n);
  });

  it('saturates or wraps, rounds numbers per options', () => {
    expect(encodeBigInt('int64', 2n ** 70n)).toBe(2n ** 63n - 1n);
    expect(encodeBigInt('int64', 2n ** 64n + 5n, { saturate: false })).toBe(5n);
    expect(encodeBigInt('int64', 1e30)).toBe(2n ** 63n - 1n);
    expect(encodeBigInt('int64', -Infinity)).toBe(2n ** 63n);
    expect(encodeBigInt('int64', NaN)).toBe(0n);
    expect(encodeBigInt('int64', 2.5, { rounding: 'nearestEven' })).toBe(2n);
    expect(encodeBigInt('int64', -2.5)).toBe(2n ** 64n - 2n);
    expect(roundTo('int64', 2 ** 63)).toBe(2 ** 63); // saturates to 2^63 − 1, whose nearest double is 2^63
    expect(roundTo('int64', -(2 ** 70))).toBe(-(2 ** 63));
    expect(roundTo('int64', 12345.9)).toBe(12345);
  });

  it('round-trips every int64 value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => {
        expect(decodeBigInt('int64', encodeBigInt('int64', v))).toBe(v);
      }),
    );
  });

  it('agrees with the number path for 8- and 32-bit types', () => {
    fc.assert(
      fc.property(fc.constantFrom('int8', 'uint8', 'int32'), fc.double({ noNaN: true }), fc.boolean(), (name, x, saturate) => {
        expect(encodeBigInt(name, x, { saturate })).toBe(BigInt(encode(name, x, { saturate })));
      }),
    );
  });

  it('rejects float dtypes and out-of-range patterns', () => {
    expect(() => encodeBigInt('fp16', 1)).toThrow(/integer dtypes only/);
    expect(() => decodeBigInt('fp32', 1n)).toThrow(ArgumentError);
    expect(() => decodeBigInt('int64', 2n ** 64n)).toThrow(/\[0, 2\^64\)/);
    expect(() => decodeBigInt('int8', -1n)).toThrow(ArgumentError);
  });
});
