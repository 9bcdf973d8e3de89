// Golden OCP OFP8 patterns (OCP 8-bit Floating Point Specification v1.0: E4M3 bias 7 without
// infinities, NaN S.1111.111; E5M2 bias 15, IEEE-like).
import { describe, expect, it } from 'vitest';
import { decode, encode } from './conversion.ts';

describe('fp8e4m3fn golden patterns', () => {
  it.each([
    [1, 0x38],
    [-1, 0xb8],
    [448, 0x7e],
    [-448, 0xfe],
    [2 ** -6, 0x08],
    [2 ** -9, 0x01],
    [7 * 2 ** -9, 0x07],
    [256, 0x78],
    [-0, 0x80],
  ])('%d ↔ %i', (value, bits) => {
    expect(encode('fp8e4m3fn', value)).toBe(bits);
    expect(Object.is(decode('fp8e4m3fn', bits), value)).toBe(true);
  });

  it('has NaN only at S.1111.111 and no infinities', () => {
    expect(encode('fp8e4m3fn', NaN)).toBe(0x7f);
    expect(decode('fp8e4m3fn', 0x7f)).toBeNaN();
    expect(decode('fp8e4m3fn', 0xff)).toBeNaN();
    expect(decode('fp8e4m3fn', 0x7c)).toBe(384); // would be Inf in an IEEE layout
  });

  it('rounds ties to even', () => {
    expect(encode('fp8e4m3fn', 1 + 2 ** -4)).toBe(0x38); // half-up: 0x39
    expect(encode('fp8e4m3fn', 1 + 3 * 2 ** -4)).toBe(0x3a); // truncation: 0x39
    expect(encode('fp8e4m3fn', 464)).toBe(0x7e); // max + ½ulp, max's mantissa 110 is even
  });

  it('overflow: NaN keeping the sign (non-saturating), ±448 when saturating', () => {
    expect(encode('fp8e4m3fn', 465)).toBe(0x7f);
    expect(encode('fp8e4m3fn', -465)).toBe(0xff);
    expect(encode('fp8e4m3fn', Infinity)).toBe(0x7f);
    expect(encode('fp8e4m3fn', -Infinity)).toBe(0xff);
    expect(encode('fp8e4m3fn', 465, { saturate: true })).toBe(0x7e);
    expect(encode('fp8e4m3fn', Infinity, { saturate: true })).toBe(0x7e);
    expect(encode('fp8e4m3fn', -Infinity, { saturate: true })).toBe(0xfe);
  });
});

describe('fp8e5m2 golden patterns', () => {
  it.each([
    [1, 0x3c],
    [-2, 0xc0],
    [57344, 0x7b],
    [2 ** -14, 0x04],
    [2 ** -16, 0x01],
    [Infinity, 0x7c],
    [-Infinity, 0xfc],
    [-0, 0x80],
  ])('%d ↔ %i', (value, bits) => {
    expect(encode('fp8e5m2', value)).toBe(bits);
    expect(Object.is(decode('fp8e5m2', bits), value)).toBe(true);
  });

  it('canonicalises NaN to 0x7F; S.11111.{01,10,11} are NaN', () => {
    expect(encode('fp8e5m2', NaN)).toBe(0x7f);
    for (const bits of [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff]) expect(decode('fp8e5m2', bits)).toBeNaN();
  });

  it('rounds ties to even', () => {
    expect(encode('fp8e5m2', 1 + 2 ** -3)).toBe(0x3c);
    expect(encode('fp8e5m2', 1 + 3 * 2 ** -3)).toBe(0x3e);
    expect(encode('fp8e5m2', 61440)).toBe(0x7c); // max + ½ulp: max's mantissa 11 is odd → Inf
    expect(encode('fp8e5m2', 61439)).toBe(0x7b);
  });

  it('overflow: ±Inf (non-saturating), ±57344 when saturating', () => {
    expect(encode('fp8e5m2', -1e5)).toBe(0xfc);
    expect(encode('fp8e5m2', 1e5, { saturate: true })).toBe(0x7b);
    expect(encode('fp8e5m2', -Infinity, { saturate: true })).toBe(0xfb);
  });
});
