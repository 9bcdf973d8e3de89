import { bfloat16Format } from './bfloat16.ts';
import { resolveDType, type DType, type DTypeName } from './dtype.ts';
import { decodeFloat32Bits, encodeFloat32Bits } from './float32.ts';
import { float16Format } from './float16.ts';
import { float8e4m3fnFormat, float8e5m2Format } from './float8.ts';
import { float8e4m3fnuzFormat, float8e5m2fnuzFormat } from './float8Fnuz.ts';
import { decodeFloatBits, encodeFloatBits, type FloatFormat } from './floatFormat.ts';
import {
  decodeIntegerBits,
  int32Format,
  int64Format,
  int8Format,
  integerBigIntValueOf,
  integerBitsOf,
  integerValueOf,
  uint8Format,
  type IntegerFormat,
} from './integer.ts';
import { resolveEncodeOptions, type EncodeOptions, type Rounding } from './rounding.ts';
import { ArgumentError } from './tilekitError.ts';

/** How one dtype converts: to bits, from bits, and to its nearest representable value. */
export interface Codec {
  readonly encode: (value: number, saturate: boolean, rounding: Rounding) => number;
  readonly decode: (bits: number) => number;
  readonly roundTo: (value: number, saturate: boolean, rounding: Rounding) => number;
}

function smallFloatCodec(format: FloatFormat): Codec {
  // Every pattern decoded once: decoding is a table read (2^16 doubles = 512 KiB at most).
  let table: Float64Array | undefined;
  const decode = (bits: number): number => {
    table ??= Float64Array.from({ length: 2 ** format.bits }, (_, i) => decodeFloatBits(format, i));
    return table[bits]!;
  };
  const encode = (value: number, saturate: boolean, rounding: Rounding): number => encodeFloatBits(format, value, saturate, rounding);
  return { encode, decode, roundTo: (value, saturate, rounding) => decode(encode(value, saturate, rounding)) };
}

const float32Codec: Codec = {
  encode: encodeFloat32Bits,
  decode: decodeFloat32Bits,
  roundTo: (value, saturate, rounding) =>
    rounding === 'nearestEven' && !saturate ? Math.fround(value) : decodeFloat32Bits(encodeFloat32Bits(value, saturate, rounding)),
};

function integerCodec(format: IntegerFormat): Codec {
  return {
    encode: (value, saturate, rounding) => integerBitsOf(format, integerValueOf(format, value, saturate, rounding)),
    decode: (bits) => decodeIntegerBits(format, bits),
    roundTo: (value, saturate, rounding) => integerValueOf(format, value, saturate, rounding),
  };
}

const int64NeedsBigInt = (): never => {
  throw new ArgumentError(
    'dtype',
    'int64 bit patterns do not fit a JavaScript number exactly; use encodeBigInt / decodeBigInt for int64',
    'int64',
  );
};

const int64Codec: Codec = {
  encode: int64NeedsBigInt,
  decode: int64NeedsBigInt,
  // The exact int64 result, then its nearest double (exact below 2^53 in magnitude).
  roundTo: (value, saturate, rounding) => Number(integerBigIntValueOf(int64Format, value, saturate, rounding)),
};

const codecs: Readonly<Record<DTypeName, Codec>> = Object.freeze({
  fp32: float32Codec,
  fp16: smallFloatCodec(float16Format),
  bf16: smallFloatCodec(bfloat16Format),
  fp8e4m3fn: smallFloatCodec(float8e4m3fnFormat),
  fp8e5m2: smallFloatCodec(float8e5m2Format),
  fp8e4m3fnuz: smallFloatCodec(float8e4m3fnuzFormat),
  fp8e5m2fnuz: smallFloatCodec(float8e5m2fnuzFormat),
  int8: integerCodec(int8Format),
  uint8: integerCodec(uint8Format),
  int32: integerCodec(int32Format),
  int64: int64Codec,
});

const integerFormats: Readonly<Partial<Record<DTypeName, IntegerFormat>>> = Object.freeze({
  int8: int8Format,
  uint8: uint8Format,
  int32: int32Format,
  int64: int64Format,
});

/** The codec of a dtype, for loops that resolve the dtype and options once (see storage.ts). */
export function codecOf(dtype: DType): Codec {
  return codecs[dtype.name];
}

function checkValue(value: unknown): asserts value is number {
  if (typeof value !== 'number') throw new ArgumentError('value', 'must be a number', value);
}

function checkBits(dtype: DType, bits: unknown): asserts bits is number {
  if (typeof bits !== 'number' || !Number.isInteger(bits) || bits < 0 || bits >= 2 ** dtype.bits) {
    throw new ArgumentError('bits', `must be an integer bit pattern in [0, 2^${dtype.bits}) for ${dtype.name}`, bits);
  }
}

/**
 * The bit pattern of `value` converted to `dtype`, as an unsigned integer in [0, 2^bits): e.g.
 * `encode('fp16', 1) === 0x3C00`, `encode('int8', -1) === 0xFF`. Rounding happens once, exactly
 * from the float64 input (see {@link EncodeOptions} and {@link defaultEncodeOptions} for the rules).
 * Postcondition (tested exhaustively for ≤16-bit floats): `encode(d, decode(d, b)) === b` for every
 * non-NaN pattern b (NaNs map to the canonical NaN; fnuz has no −0 so 0x00 round-trips).
 * @throws ArgumentError for int64 (use {@link encodeBigInt}), a non-number value or bad options.
 */
export function encode(dtype: DType | DTypeName, value: number, options?: EncodeOptions): number {
  const d = resolveDType(dtype);
  checkValue(value);
  const { saturate, rounding } = resolveEncodeOptions(d, options);
  return codecs[d.name].encode(value, saturate, rounding);
}

/**
 * The exact value (as float64) of a bit pattern of `dtype`; NaN patterns decode to NaN.
 * @throws ArgumentError for int64 (use {@link decodeBigInt}) or a pattern outside [0, 2^bits).
 */
export function decode(dtype: DType | DTypeName, bits: number): number {
  const d = resolveDType(dtype);
  if (d.name === 'int64') return int64NeedsBigInt();
  checkBits(d, bits);
  return codecs[d.name].decode(bits);
}

/**
 * The value `value` becomes in `dtype`: `decode(dtype, encode(dtype, value, options))`, i.e. the
 * nearest representable value under the rounding mode (or ±Inf / NaN / ±max on overflow).
 * Works for int64 too (the exact int64 result, returned as its nearest double).
 * Postconditions (property-tested): idempotent; monotone (x ≤ y ⇒ roundTo(x) ≤ roundTo(y)) where no
 * NaN is produced; |roundTo(x) − x| ≤ ½ulp in range; toward zero never increases |x|.
 */
export function roundTo(dtype: DType | DTypeName, value: number, options?: EncodeOptions): number {
  const d = resolveDType(dtype);
  checkValue(value);
  const { saturate, rounding } = resolveEncodeOptions(d, options);
  return codecs[d.name].roundTo(value, saturate, rounding);
}

function integerFormatOf(d: DType, fn: string): IntegerFormat {
  const format = integerFormats[d.name];
  if (format === undefined) {
    throw new ArgumentError(
      'dtype',
      `${fn} converts integer dtypes only (int8, uint8, int32, int64); use ${fn === 'encodeBigInt' ? 'encode' : 'decode'} for floats`,
      d.name,
    );
  }
  return format;
}

/**
 * The bit pattern of `value` in an integer dtype, as an unsigned bigint in [0, 2^bits): e.g.
 * `encodeBigInt('int64', -1) === 2n ** 64n - 1n`. Numbers are rounded per `options` (default toward
 * zero, saturating, NaN → 0); bigints are exact and only saturated or wrapped.
 * @throws ArgumentError for float dtypes or bad options.
 */
export function encodeBigInt(dtype: DType | DTypeName, value: number | bigint, options?: EncodeOptions): bigint {
  const d = resolveDType(dtype);
  const format = integerFormatOf(d, 'encodeBigInt');
  if (typeof value !== 'bigint') checkValue(value);
  const { saturate, rounding } = resolveEncodeOptions(d, options);
  return BigInt.asUintN(format.bits, integerBigIntValueOf(format, value, saturate, rounding));
}

/**
 * The value of an unsigned bit pattern of an integer dtype: e.g. `decodeBigInt('int64', 2n ** 64n - 1n) === -1n`.
 * @throws ArgumentError for float dtypes or a pattern outside [0, 2^bits).
 */
export function decodeBigInt(dtype: DType | DTypeName, bits: bigint): bigint {
  const d = resolveDType(dtype);
  const format = integerFormatOf(d, 'decodeBigInt');
  if (typeof bits !== 'bigint' || bits < 0n || bits >= 1n << BigInt(format.bits)) {
    throw new ArgumentError('bits', `must be a bigint bit pattern in [0, 2^${format.bits}) for ${d.name}`, bits);
  }
  return format.signed ? BigInt.asIntN(format.bits, bits) : bits;
}
