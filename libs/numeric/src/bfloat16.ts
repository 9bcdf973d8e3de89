import { defineFloatFormat } from './floatFormat.ts';

/**
 * bfloat16: the top half of binary32: 8 exponent bits (bias 127), 7 mantissa bits, IEEE specials,
 * max (2 − 2^-7)·2^127 (0x7F7F); canonical quiet NaN 0x7FC0. Conversion from float64 rounds once,
 * directly (no detour through float32, which would double-round values just above a tie).
 */
export const bfloat16Format = defineFloatFormat({
  name: 'bf16',
  exponentBits: 8,
  mantissaBits: 7,
  exponentBias: 127,
  specials: 'ieee',
  canonicalNaN: 0x7fc0,
});
