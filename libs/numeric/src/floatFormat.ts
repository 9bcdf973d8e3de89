import { binadeExponent, pow2 } from './float64Bits.ts';
import type { Rounding } from './rounding.ts';
import { ArgumentError } from './tilekitError.ts';

/**
 * Which bit patterns are special, following LLVM's naming of the fp8 variants:
 * - `ieee`: exponent all ones is ±Inf (mantissa 0) or NaN (mantissa ≠ 0); ±0 (fp32, fp16, bf16, e5m2).
 * - `fn`: finite + NaN: no infinities, the only NaNs are S.1…1.1…1; ±0 (OCP e4m3fn).
 * - `fnuz`: finite + NaN + unsigned zero: the negative-zero pattern 1.0…0 is the only NaN, no
 *   infinities, no −0 (AMD e4m3fnuz, e5m2fnuz).
 */
export type FloatSpecials = 'ieee' | 'fn' | 'fnuz';

/** The defining fields of a binary floating-point format: sign, exponent field, trailing mantissa. */
export interface FloatFormatSpec {
  readonly name: string;
  readonly exponentBits: number;
  readonly mantissaBits: number;
  readonly exponentBias: number;
  readonly specials: FloatSpecials;
  /** The pattern every NaN converts to. */
  readonly canonicalNaN: number;
}

/**
 * A binary floating-point format with the constants the codec needs, derived once from its spec.
 * Bit patterns are unsigned integers in [0, 2^bits); a "magnitude" is a pattern with the sign clear.
 */
export interface FloatFormat extends FloatFormatSpec {
  readonly bits: number;
  /** 2^(bits−1): the sign bit's value. */
  readonly signBit: number;
  /** Magnitude pattern of the largest finite value. */
  readonly maxFiniteMagnitude: number;
  /** Magnitude pattern of +Inf, or null when the format has none. */
  readonly infinityMagnitude: number | null;
  /** Unbiased exponent of the smallest normal: 1 − bias. */
  readonly minExponent: number;
  /** 2^mantissaBits. */
  readonly mantissaScale: number;
  /** Value of the smallest subnormal: 2^(1 − bias − mantissaBits). */
  readonly minSubnormal: number;
}

/**
 * Derives a {@link FloatFormat} from its spec (a 1-bit sign is implied). Formats up to binary32 are
 * supported (1–8 exponent bits, 1–23 mantissa bits, at most 32 bits), which keeps every value and
 * every rounding step exact in float64.
 * @throws ArgumentError for fields out of that range or a canonicalNaN that is not a NaN pattern.
 */
export function defineFloatFormat(spec: FloatFormatSpec): FloatFormat {
  const field = (name: 'exponentBits' | 'mantissaBits', max: number): void => {
    const v = spec[name];
    if (!Number.isInteger(v) || v < 1 || v > max) throw new ArgumentError(`spec.${name}`, `must be an integer in [1, ${max}]`, v);
  };
  field('exponentBits', 8);
  field('mantissaBits', 23);
  if (!Number.isInteger(spec.exponentBias) || Math.abs(spec.exponentBias) > 2 ** spec.exponentBits) {
    throw new ArgumentError('spec.exponentBias', `must be an integer of magnitude at most 2^${spec.exponentBits}`, spec.exponentBias);
  }
  if (1 + spec.exponentBits + spec.mantissaBits > 32) {
    throw new ArgumentError('spec', 'must describe at most 32 bits (1 + exponentBits + mantissaBits)', spec.name);
  }
  const format = deriveFloatFormat(spec);
  if (!Number.isInteger(spec.canonicalNaN) || spec.canonicalNaN < 0 || !isNaNBits(format, spec.canonicalNaN)) {
    throw new ArgumentError('spec.canonicalNaN', `must be a NaN bit pattern of ${spec.name}`, spec.canonicalNaN);
  }
  return format;
}

function deriveFloatFormat(spec: FloatFormatSpec): FloatFormat {
  const bits = 1 + spec.exponentBits + spec.mantissaBits;
  const signBit = 2 ** (bits - 1);
  const mantissaScale = 2 ** spec.mantissaBits;
  const allOnesExponent = 2 ** spec.exponentBits - 1;
  const infinityMagnitude = spec.specials === 'ieee' ? allOnesExponent * mantissaScale : null;
  const maxFiniteMagnitude =
    spec.specials === 'ieee' ? allOnesExponent * mantissaScale - 1 : spec.specials === 'fn' ? signBit - 2 : signBit - 1;
  const minExponent = 1 - spec.exponentBias;
  return Object.freeze({
    ...spec,
    bits,
    signBit,
    maxFiniteMagnitude,
    infinityMagnitude,
    minExponent,
    mantissaScale,
    minSubnormal: pow2(minExponent - spec.mantissaBits),
  });
}

/**
 * The exact value of a bit pattern (0 ≤ bits < 2^format.bits, not checked here): ±0, subnormals,
 * normals, ±Inf and NaN per the format's specials. Every finite result is exact in float64.
 */
export function decodeFloatBits(format: FloatFormat, bits: number): number {
  const negative = bits >= format.signBit;
  const magnitude = negative ? bits - format.signBit : bits;
  switch (format.specials) {
    case 'fnuz':
      if (negative && magnitude === 0) return NaN;
      break;
    case 'fn':
      if (magnitude === format.signBit - 1) return NaN;
      break;
    case 'ieee':
      if (magnitude >= format.infinityMagnitude!) {
        if (magnitude > format.infinityMagnitude!) return NaN;
        return negative ? -Infinity : Infinity;
      }
      break;
  }
  const exponentField = Math.floor(magnitude / format.mantissaScale);
  const mantissa = magnitude - exponentField * format.mantissaScale;
  const value =
    exponentField === 0
      ? mantissa * format.minSubnormal
      : (format.mantissaScale + mantissa) * pow2(exponentField - format.exponentBias - format.mantissaBits);
  return negative ? -value : value;
}

/**
 * The magnitude pattern of a finite a > 0 rounded to the format's precision, computed exactly on
 * float64 (no intermediate rounding). The result may exceed maxFiniteMagnitude: that is overflow,
 * resolved by the caller. Within a binade [2^k, 2^(k+1)) the representable values are n·2^(k−m) and
 * their patterns (k − minExponent)·2^m + n, which also holds for the subnormal range (k = minExponent,
 * n < 2^m) and for a carry into the next binade (n = 2^(m+1)).
 */
function roundMagnitude(format: FloatFormat, a: number, towardZero: boolean): number {
  let k = binadeExponent(a);
  if (k < format.minExponent) k = format.minExponent;
  // Scaling by a power of two is exact; q < 2^(m+1), so its integer and fractional parts are exact.
  const q = a * pow2(format.mantissaBits - k);
  let n = Math.floor(q);
  if (!towardZero) {
    const fraction = q - n;
    if (fraction > 0.5 || (fraction === 0.5 && n % 2 === 1)) n += 1;
  }
  return (k - format.minExponent) * format.mantissaScale + n;
}

/**
 * The bit pattern of `value` in the format, rounded once and exactly from float64.
 * - NaN → the format's canonical NaN.
 * - Overflow (the rounded magnitude exceeds the largest finite): ±max when `saturate` or when
 *   rounding toward zero (IEEE: truncation never reaches infinity); otherwise ±Inf where the format
 *   has infinities, else NaN (e4m3fn keeps the sign, S.1111.111, as CUDA and PyTorch do; fnuz has
 *   the single NaN 0x80).
 * - ±Inf input → ±max when `saturate`, else ±Inf or NaN as for overflow.
 * - The sign of zero is kept (a negative value that rounds to zero gives −0), except in fnuz formats,
 *   which have no −0 and give 0.
 */
export function encodeFloatBits(format: FloatFormat, value: number, saturate: boolean, rounding: Rounding): number {
  if (value !== value) return format.canonicalNaN;
  const negative = value < 0 || Object.is(value, -0);
  const a = negative ? -value : value;
  let magnitude: number;
  if (a === Infinity) {
    magnitude = saturate ? format.maxFiniteMagnitude : overflowMagnitude(format);
  } else if (a === 0) {
    magnitude = 0;
  } else {
    magnitude = roundMagnitude(format, a, rounding === 'towardZero');
    if (magnitude > format.maxFiniteMagnitude) {
      magnitude = saturate || rounding === 'towardZero' ? format.maxFiniteMagnitude : overflowMagnitude(format);
    }
  }
  if (magnitude === NAN_MAGNITUDE) {
    // fn's only NaNs are S.1…1.1…1: the negative one is all ones.
    return format.specials === 'fn' && negative ? 2 * format.signBit - 1 : format.canonicalNaN;
  }
  if (magnitude === 0 && format.specials === 'fnuz') return 0;
  return negative ? format.signBit + magnitude : magnitude;
}

/** Marks "the result is NaN" inside encodeFloatBits (no real magnitude is negative). */
const NAN_MAGNITUDE = -1;

function overflowMagnitude(format: FloatFormat): number {
  return format.infinityMagnitude ?? NAN_MAGNITUDE;
}

/** True when the pattern is a NaN of the format. */
export function isNaNBits(format: FloatFormat, bits: number): boolean {
  return Number.isNaN(decodeFloatBits(format, bits));
}
