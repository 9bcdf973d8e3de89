import { float32BitsOf, float32FromBits } from './float64Bits.ts';
import { defineFloatFormat, encodeFloatBits } from './floatFormat.ts';
import type { Rounding } from './rounding.ts';

/** IEEE 754 binary32: 8 exponent bits (bias 127), 23 mantissa bits; canonical quiet NaN 0x7FC00000. */
export const float32Format = defineFloatFormat({
  name: 'fp32',
  exponentBits: 8,
  mantissaBits: 23,
  exponentBias: 127,
  specials: 'ieee',
  canonicalNaN: 0x7fc00000,
});

const FLOAT32_MAX_BITS = 0x7f7fffff;

/**
 * binary32 bits of `value`. Round-to-nearest-even without saturation is Math.fround (the engine's
 * correctly rounded conversion); the other modes use the exact generic codec, which agrees with
 * Math.fround where both apply (checked by a property test).
 */
export function encodeFloat32Bits(value: number, saturate: boolean, rounding: Rounding): number {
  if (rounding !== 'nearestEven') return encodeFloatBits(float32Format, value, saturate, rounding);
  if (value !== value) return float32Format.canonicalNaN;
  const rounded = Math.fround(value);
  if (saturate && (rounded === Infinity || rounded === -Infinity)) {
    return rounded > 0 ? FLOAT32_MAX_BITS : float32Format.signBit + FLOAT32_MAX_BITS;
  }
  return float32BitsOf(rounded);
}

/** The binary32 value of a 32-bit pattern (0 ≤ bits < 2^32), exact in float64. */
export function decodeFloat32Bits(bits: number): number {
  return float32FromBits(bits);
}
