import type { Rounding } from './rounding.ts';

/** A two's-complement (signed) or plain binary (unsigned) integer format of 8, 32 or 64 bits. */
export interface IntegerFormat {
  readonly name: string;
  readonly bits: number;
  readonly signed: boolean;
  /** Exact bounds. */
  readonly minBigInt: bigint;
  readonly maxBigInt: bigint;
  /** Bounds as float64 (for 64 bits, the nearest doubles: ±2^63 and 2^64, which are out of range). */
  readonly min: number;
  readonly max: number;
}

/** Derives an {@link IntegerFormat}. */
export function defineIntegerFormat(name: string, bits: number, signed: boolean): IntegerFormat {
  const minBigInt = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const maxBigInt = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  return Object.freeze({ name, bits, signed, minBigInt, maxBigInt, min: Number(minBigInt), max: Number(maxBigInt) });
}

/** int8_t, uint8_t, int32_t, int64_t. */
export const int8Format = defineIntegerFormat('int8', 8, true);
export const uint8Format = defineIntegerFormat('uint8', 8, false);
export const int32Format = defineIntegerFormat('int32', 32, true);
export const int64Format = defineIntegerFormat('int64', 64, true);

/**
 * `value` (finite) rounded to an integer: toward zero (Math.trunc) or to nearest with ties to even.
 * Doubles of magnitude ≥ 2^52 are integers already.
 */
export function roundToInteger(value: number, rounding: Rounding): number {
  if (rounding === 'towardZero') return Math.trunc(value);
  const floor = Math.floor(value);
  const fraction = value - floor; // exact
  if (fraction > 0.5 || (fraction === 0.5 && floor % 2 !== 0)) return floor + 1;
  return floor;
}

/**
 * The value `value` converts to, as a number, for formats of at most 32 bits. NaN → 0. Saturating:
 * clamp to [min, max] (±Inf → the bound). Wrapping: reduce modulo 2^bits into the range (±Inf → 0,
 * as JavaScript's ToInt32 does). Never −0.
 */
export function integerValueOf(format: IntegerFormat, value: number, saturate: boolean, rounding: Rounding): number {
  if (value !== value) return 0;
  if (value === Infinity || value === -Infinity) {
    if (!saturate) return 0;
    return value > 0 ? format.max : format.min;
  }
  const n = roundToInteger(value, rounding);
  if (saturate) {
    if (n > format.max) return format.max;
    if (n < format.min) return format.min;
    return n + 0; // -0 → 0
  }
  const modulus = 2 ** format.bits;
  let wrapped = ((n % modulus) + modulus) % modulus; // fmod is exact
  if (format.signed && wrapped >= modulus / 2) wrapped -= modulus;
  return wrapped + 0;
}

/** Bit pattern (unsigned, < 2^bits) of an in-range integer value, formats of at most 32 bits. */
export function integerBitsOf(format: IntegerFormat, integerValue: number): number {
  return integerValue < 0 ? integerValue + 2 ** format.bits : integerValue;
}

/** The value of an unsigned bit pattern (< 2^bits), formats of at most 32 bits. */
export function decodeIntegerBits(format: IntegerFormat, bits: number): number {
  return format.signed && bits >= 2 ** (format.bits - 1) ? bits - 2 ** format.bits : bits;
}

/**
 * The value `value` converts to, as a bigint, for any integer format: numbers are rounded as in
 * {@link integerValueOf} (NaN → 0; ±Inf → the bound when saturating, else 0); bigints need no
 * rounding. Saturating clamps; wrapping reduces modulo 2^bits (BigInt.asIntN / asUintN).
 */
export function integerBigIntValueOf(format: IntegerFormat, value: number | bigint, saturate: boolean, rounding: Rounding): bigint {
  let n: bigint;
  if (typeof value === 'bigint') {
    n = value;
  } else if (value !== value) {
    return 0n;
  } else if (value === Infinity || value === -Infinity) {
    if (!saturate) return 0n;
    return value > 0 ? format.maxBigInt : format.minBigInt;
  } else {
    n = BigInt(roundToInteger(value, rounding));
  }
  if (saturate) {
    if (n > format.maxBigInt) return format.maxBigInt;
    if (n < format.minBigInt) return format.minBigInt;
    return n;
  }
  return format.signed ? BigInt.asIntN(format.bits, n) : BigInt.asUintN(format.bits, n);
}
