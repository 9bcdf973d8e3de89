// Golden IEEE binary16 patterns (IEEE 754-2019 §3.6: 5 exponent bits, bias 15, 10 mantissa bits).
import { describe, expect, it } from 'vitest';
import { decode, encode } from './conversion.ts';
import { float16Format } from './float16.ts';

describe('fp16 golden patterns', () => {
  it.each([
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff],
    [2 ** -14, 0x0400],
    [2 ** -24, 0x0001],
    [1023 * 2 ** -24, 0x03ff],
    [0, 0x0000],
    [-0, 0x8000],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
    [1 / 3, 0x3555],
  ])('%d ↔ %i', (value, bits) => {
    expect(encode('fp16', value)).toBe(bits);
    if (value !== 1 / 3) expect(Object.is(decode('fp16', bits), value)).toBe(true);
  });

  it('canonicalises NaN to 0x7E00 and decodes every NaN pattern to NaN', () => {
    expect(encode('fp16', NaN)).toBe(0x7e00);
    expect(float16Format.canonicalNaN).toBe(0x7e00);
    for (const bits of [0x7c01, 0x7e00, 0x7fff, 0xfc01, 0xffff]) expect(decode('fp16', bits)).toBeNaN();
  });

  it('rounds ties to even (fails under truncation and under round-half-up)', () => {
    expect(encode('fp16', 1 + 2 ** -11)).toBe(0x3c00); // half-up would give 0x3C01
    expect(encode('fp16', 1 + 3 * 2 ** -11)).toBe(0x3c02); // truncation would give 0x3C01
    expect(encode('fp16', 1 + 2 ** -11 + 2 ** -40)).toBe(0x3c01); // just above the tie: up
    expect(encode('fp16', 1 + 3 * 2 ** -11, { rounding: 'towardZero' })).toBe(0x3c01);
    expect(encode('fp16', 2 ** -25)).toBe(0x0000); // subnormal tie to even (zero)
    expect(encode('fp16', 3 * 2 ** -25)).toBe(0x0002);
  });

  it('overflows at 65520 (max + ½ulp, tie to the even Inf pattern) unless saturating', () => {
    expect(encode('fp16', 65519.99)).toBe(0x7bff);
    expect(encode('fp16', 65520)).toBe(0x7c00);
    expect(encode('fp16', -65520)).toBe(0xfc00);
    expect(encode('fp16', 65520, { saturate: true })).toBe(0x7bff);
    expect(encode('fp16', 1e6, { rounding: 'towardZero' })).toBe(0x7bff);
    expect(encode('fp16', -Infinity, { saturate: true })).toBe(0xfbff);
  });
});
