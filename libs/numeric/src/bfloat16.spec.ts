// Golden bfloat16 patterns (the high 16 bits of binary32: 8 exponent bits, bias 127, 7 mantissa bits).
import { describe, expect, it } from 'vitest';
import { decode, encode } from './conversion.ts';

describe('bf16 golden patterns', () => {
  it.each([
    [1, 0x3f80],
    [-1, 0xbf80],
    [3, 0x4040],
    [(2 - 2 ** -7) * 2 ** 127, 0x7f7f],
    [2 ** -126, 0x0080],
    [2 ** -133, 0x0001],
    [-0, 0x8000],
    [Infinity, 0x7f80],
    [-Infinity, 0xff80],
  ])('%d ↔ %i', (value, bits) => {
    expect(encode('bf16', value)).toBe(bits);
    expect(Object.is(decode('bf16', bits), value)).toBe(true);
  });

  it('canonicalises NaN to 0x7FC0', () => {
    expect(encode('bf16', NaN)).toBe(0x7fc0);
    expect(decode('bf16', 0x7f81)).toBeNaN();
    expect(decode('bf16', 0xffc0)).toBeNaN();
  });

  it('rounds ties to even (fails under truncation and under round-half-up)', () => {
    expect(encode('bf16', 1 + 2 ** -8)).toBe(0x3f80);
    expect(encode('bf16', 1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(encode('bf16', 1 + 3 * 2 ** -8, { rounding: 'towardZero' })).toBe(0x3f81);
  });

  it('rounds once from float64: a value just above a tie rounds up (float32 would first round it onto the tie)', () => {
    const justAboveTie = 1 + 2 ** -8 + 2 ** -40;
    expect(Math.fround(justAboveTie)).toBe(1 + 2 ** -8); // the double-rounding trap
    expect(encode('bf16', justAboveTie)).toBe(0x3f81);
    expect(encode('bf16', -justAboveTie)).toBe(0xbf81);
  });

  it('overflows at max + ½ulp unless saturating or truncating', () => {
    const max = (2 - 2 ** -7) * 2 ** 127;
    expect(encode('bf16', max + 2 ** 119)).toBe(0x7f80); // exactly the tie: to the even Inf pattern
    expect(encode('bf16', max + 2 ** 118)).toBe(0x7f7f);
    expect(encode('bf16', 1e39, { saturate: true })).toBe(0x7f7f);
    expect(encode('bf16', 1e39, { rounding: 'towardZero' })).toBe(0x7f7f);
  });
});
