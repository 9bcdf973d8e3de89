import { defineFloatFormat } from './floatFormat.ts';

/**
 * IEEE 754 binary16 ("half"): 5 exponent bits (bias 15), 10 mantissa bits, ±Inf at 0x7C00/0xFC00,
 * max 65504 (0x7BFF), smallest subnormal 2^-24 (0x0001); canonical quiet NaN 0x7E00.
 */
export const float16Format = defineFloatFormat({
  name: 'fp16',
  exponentBits: 5,
  mantissaBits: 10,
  exponentBias: 15,
  specials: 'ieee',
  canonicalNaN: 0x7e00,
});
