import { bfloat16Format } from './bfloat16.ts';
import { float16Format } from './float16.ts';
import { float32Format } from './float32.ts';
import { float8e4m3fnFormat, float8e5m2Format } from './float8.ts';
import { float8e4m3fnuzFormat, float8e5m2fnuzFormat } from './float8Fnuz.ts';
import { decodeFloatBits, type FloatFormat } from './floatFormat.ts';
import { int32Format, int64Format, int8Format, uint8Format, type IntegerFormat } from './integer.ts';
import { ArgumentError } from './tilekitError.ts';

/** The element types tilekit kernels read and write. */
export type DTypeName =
  'fp32' | 'fp16' | 'bf16' | 'fp8e4m3fn' | 'fp8e5m2' | 'fp8e4m3fnuz' | 'fp8e5m2fnuz' | 'int8' | 'uint8' | 'int32' | 'int64';

/** Every {@link DTypeName}, floats first (widest first), then integers. */
export const dtypeNames: readonly DTypeName[] = Object.freeze([
  'fp32',
  'fp16',
  'bf16',
  'fp8e4m3fn',
  'fp8e5m2',
  'fp8e4m3fnuz',
  'fp8e5m2fnuz',
  'int8',
  'uint8',
  'int32',
  'int64',
]);

/** C++ spellings of a dtype, per compilation target. */
export interface CppNames {
  /** nvcc / NVRTC device code. */
  readonly cuda: string;
  /** hipcc / hipRTC device code. */
  readonly hip: string;
  /** Host code compiled by g++ ≥ 12: the storage type (bit pattern for fp16/bf16/fp8). */
  readonly host: string;
}

/** Headers (bare names, e.g. `cuda_fp16.h`) that declare the {@link CppNames}, per target. */
export interface CppHeaders {
  readonly cuda: readonly string[];
  readonly hip: readonly string[];
  readonly host: readonly string[];
}

/**
 * Static facts about one element type. Floats describe IEEE-style binary formats (sign, exponent
 * field, trailing mantissa); integers are two's complement (signed) or plain binary.
 *
 * Conventions for integers: `minNormal` = `minSubnormal` = `epsilon` = 1 (the spacing of the
 * representable values), exponent/mantissa fields 0. For int64, `max`/`lowest` are the nearest
 * float64 values (2^63, −2^63), so `max` is NOT exact; {@link DType.integerRange} has the exact bounds.
 *
 * C++ names (`cppType`): CUDA has no fnuz fp8 type, so CUDA code handles fnuz data as `uint8_t`
 * bit patterns (conversion must be emitted explicitly). HIP fp16 uses `__half` (same spelling as
 * CUDA, interoperable with `_Float16`). Host code uses storage types: `uint16_t` bits for fp16/bf16
 * and `uint8_t` bits for every fp8, matching {@link Storage}.
 */
export interface DType<N extends DTypeName = DTypeName> {
  readonly name: N;
  readonly kind: 'float' | 'int';
  readonly bits: number;
  readonly bytes: number;
  readonly signed: boolean;
  readonly cppType: CppNames;
  readonly cppHeaders: CppHeaders;
  /** Largest finite value. */
  readonly max: number;
  /** Most negative finite value. */
  readonly lowest: number;
  /** Smallest positive normal value, 2^(1 − bias) (ints: 1). */
  readonly minNormal: number;
  /** Smallest positive subnormal value, 2^(1 − bias − mantissaBits) (ints: 1). */
  readonly minSubnormal: number;
  /** 2^−mantissaBits: the distance from 1 to the next value (C++ numeric_limits::epsilon) (ints: 1). */
  readonly epsilon: number;
  /** Trailing (stored) mantissa bits (ints: 0). */
  readonly mantissaBits: number;
  readonly exponentBits: number;
  readonly exponentBias: number;
  readonly hasInfinity: boolean;
  readonly hasNegativeZero: boolean;
  /** Which patterns are NaN, and the canonical one conversions produce. */
  readonly nanEncodings: string;
  /** The bit pattern every NaN converts to (ints: null). */
  readonly canonicalNaNBits: number | null;
  /** The bit pattern of +Inf (null when the format has no infinity). */
  readonly infinityBits: number | null;
  /** Exact integer bounds (floats: null). */
  readonly integerRange: { readonly min: bigint; readonly max: bigint } | null;
}

const noHeaders: readonly string[] = Object.freeze([]);
const stdint: readonly string[] = Object.freeze(['cstdint']);

function headers(cuda: readonly string[], hip: readonly string[], host: readonly string[]): CppHeaders {
  return Object.freeze({ cuda: Object.freeze([...cuda]), hip: Object.freeze([...hip]), host: Object.freeze([...host]) });
}

function floatDType<N extends DTypeName>(
  name: N,
  format: FloatFormat,
  cppType: CppNames,
  cppHeaders: CppHeaders,
  nanEncodings: string,
): DType<N> {
  const max = decodeFloatBits(format, format.maxFiniteMagnitude);
  return Object.freeze({
    name,
    kind: 'float',
    bits: format.bits,
    bytes: format.bits / 8,
    signed: true,
    cppType: Object.freeze(cppType),
    cppHeaders,
    max,
    lowest: -max,
    minNormal: format.minSubnormal * format.mantissaScale,
    minSubnormal: format.minSubnormal,
    epsilon: 1 / format.mantissaScale,
    mantissaBits: format.mantissaBits,
    exponentBits: format.exponentBits,
    exponentBias: format.exponentBias,
    hasInfinity: format.infinityMagnitude !== null,
    hasNegativeZero: format.specials !== 'fnuz',
    nanEncodings,
    canonicalNaNBits: format.canonicalNaN,
    infinityBits: format.infinityMagnitude,
    integerRange: null,
  } satisfies DType<N>);
}

function intDType<N extends DTypeName>(name: N, format: IntegerFormat, cpp: string): DType<N> {
  return Object.freeze({
    name,
    kind: 'int',
    bits: format.bits,
    bytes: format.bits / 8,
    signed: format.signed,
    cppType: Object.freeze({ cuda: cpp, hip: cpp, host: cpp }),
    cppHeaders: headers(stdint, stdint, stdint),
    max: format.max,
    lowest: format.min,
    minNormal: 1,
    minSubnormal: 1,
    epsilon: 1,
    mantissaBits: 0,
    exponentBits: 0,
    exponentBias: 0,
    hasInfinity: false,
    hasNegativeZero: false,
    nanEncodings: 'none (NaN converts to 0)',
    canonicalNaNBits: null,
    infinityBits: null,
    integerRange: Object.freeze({ min: format.minBigInt, max: format.maxBigInt }),
  } satisfies DType<N>);
}

const ieeeNaN = (canonical: string): string => `exponent all ones with a non-zero mantissa, either sign; canonical quiet NaN ${canonical}`;

/** The registry: one frozen {@link DType} per {@link DTypeName}. */
export const dtypes: Readonly<{ [N in DTypeName]: DType<N> }> = Object.freeze({
  fp32: floatDType(
    'fp32',
    float32Format,
    { cuda: 'float', hip: 'float', host: 'float' },
    headers(noHeaders, noHeaders, noHeaders),
    ieeeNaN('0x7FC00000'),
  ),
  fp16: floatDType(
    'fp16',
    float16Format,
    { cuda: '__half', hip: '__half', host: 'uint16_t' },
    headers(['cuda_fp16.h'], ['hip/hip_fp16.h'], stdint),
    ieeeNaN('0x7E00'),
  ),
  bf16: floatDType(
    'bf16',
    bfloat16Format,
    { cuda: '__nv_bfloat16', hip: '__hip_bfloat16', host: 'uint16_t' },
    headers(['cuda_bf16.h'], ['hip/hip_bf16.h'], stdint),
    ieeeNaN('0x7FC0'),
  ),
  fp8e4m3fn: floatDType(
    'fp8e4m3fn',
    float8e4m3fnFormat,
    { cuda: '__nv_fp8_e4m3', hip: '__hip_fp8_e4m3', host: 'uint8_t' },
    headers(['cuda_fp8.h'], ['hip/hip_fp8.h'], stdint),
    'S.1111.111 only (0x7F, 0xFF); canonical 0x7F; no infinities',
  ),
  fp8e5m2: floatDType(
    'fp8e5m2',
    float8e5m2Format,
    { cuda: '__nv_fp8_e5m2', hip: '__hip_fp8_e5m2', host: 'uint8_t' },
    headers(['cuda_fp8.h'], ['hip/hip_fp8.h'], stdint),
    'S.11111.{01,10,11} (0x7D-0x7F, 0xFD-0xFF); canonical 0x7F; S.11111.00 is ±Inf',
  ),
  fp8e4m3fnuz: floatDType(
    'fp8e4m3fnuz',
    float8e4m3fnuzFormat,
    { cuda: 'uint8_t', hip: '__hip_fp8_e4m3_fnuz', host: 'uint8_t' },
    headers(stdint, ['hip/hip_fp8.h'], stdint),
    '0x80 only (the would-be negative zero); no infinities, no -0',
  ),
  fp8e5m2fnuz: floatDType(
    'fp8e5m2fnuz',
    float8e5m2fnuzFormat,
    { cuda: 'uint8_t', hip: '__hip_fp8_e5m2_fnuz', host: 'uint8_t' },
    headers(stdint, ['hip/hip_fp8.h'], stdint),
    '0x80 only (the would-be negative zero); no infinities, no -0',
  ),
  int8: intDType('int8', int8Format, 'int8_t'),
  uint8: intDType('uint8', uint8Format, 'uint8_t'),
  int32: intDType('int32', int32Format, 'int32_t'),
  int64: intDType('int64', int64Format, 'int64_t'),
});

/** True when `name` is a {@link DTypeName}. */
export function isDTypeName(name: unknown): name is DTypeName {
  return typeof name === 'string' && Object.hasOwn(dtypes, name);
}

/**
 * The registry entry named `name`.
 * @throws ArgumentError naming the unknown name and listing the valid ones.
 */
export function getDType<N extends DTypeName>(name: N): DType<N>;
export function getDType(name: string): DType;
export function getDType(name: string): DType {
  if (!isDTypeName(name)) {
    throw new ArgumentError('dtype', `must be one of ${dtypeNames.join(', ')}`, name);
  }
  return dtypes[name];
}

/**
 * The registry entry for a name or a DType-like object (looked up by its `name`, so the registry's
 * facts are used even if a caller built a look-alike object).
 * @throws ArgumentError for anything that is not a known dtype or dtype name.
 */
export function resolveDType<N extends DTypeName>(dtype: N | DType<N>): DType<N>;
export function resolveDType(dtype: DTypeName | DType): DType;
export function resolveDType(dtype: DTypeName | DType): DType {
  if (typeof dtype === 'string') return getDType(dtype);
  if (typeof dtype === 'object' && dtype !== null && isDTypeName((dtype as { name?: unknown }).name)) {
    return dtypes[dtype.name];
  }
  throw new ArgumentError('dtype', `must be a DType or one of ${dtypeNames.join(', ')}`, dtype);
}
