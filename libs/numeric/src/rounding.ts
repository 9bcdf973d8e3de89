import { resolveDType, type DType, type DTypeName } from './dtype.ts';
import { ArgumentError } from './tilekitError.ts';

/**
 * How a value between two representable neighbours is resolved.
 * - `nearestEven`: IEEE 754 roundTiesToEven, the hardware default (`cvt.rn`, `__float2half_rn`).
 * - `towardZero`: IEEE roundTowardZero, i.e. truncation (C casts to integers, CK-tile's
 *   `CK_TILE_FLOAT_TO_BFLOAT16_TRUNCATE`). Like IEEE, it never overflows a finite input to
 *   infinity: finite values beyond the range become ±max.
 */
export type Rounding = 'nearestEven' | 'towardZero';

/** Every {@link Rounding}, in declaration order. */
export const roundings: readonly Rounding[] = ['nearestEven', 'towardZero'];

/**
 * Options of a conversion into a dtype. Omitted fields take {@link defaultEncodeOptions}.
 * - `saturate`: out-of-range values (and ±Inf) clamp to ±max instead of becoming ±Inf (formats with
 *   infinities) or NaN (fp8 e4m3fn and the fnuz formats). For integers, `false` wraps modulo 2^bits.
 * - `rounding`: see {@link Rounding}.
 */
export interface EncodeOptions {
  readonly saturate?: boolean;
  readonly rounding?: Rounding;
}

/** {@link EncodeOptions} with every field decided. */
export interface ResolvedEncodeOptions {
  readonly saturate: boolean;
  readonly rounding: Rounding;
}

const floatDefaults: ResolvedEncodeOptions = Object.freeze({ saturate: false, rounding: 'nearestEven' });
const integerDefaults: ResolvedEncodeOptions = Object.freeze({ saturate: true, rounding: 'towardZero' });

/**
 * The options used when a field is omitted.
 *
 * Floats: `{ saturate: false, rounding: 'nearestEven' }` for every float format. For fp32, fp16 and
 * bf16 that is IEEE 754. For fp8 it matches PyTorch's `tensor.to(torch.float8_*)` casts (overflow
 * becomes NaN for e4m3fn / the fnuz formats and Inf for e5m2), which are the reference our
 * benchmarks compare against, and it keeps overflow visible instead of silently clamping. Note that
 * device-side constructors DO saturate: CUDA `__nv_fp8_e4m3(float)` uses `__NV_SATFINITE`, HIP's
 * `__hip_fp8_*` default to `__HIP_SATFINITE`, CK-tile's `float_to_fp8_raw` clips. Model those
 * with `{ saturate: true }`.
 *
 * Integers: `{ saturate: true, rounding: 'towardZero' }`: truncation like a C cast, and clamping
 * (with NaN → 0) like the GPU's `cvt.rzi.s32.f32`, since out-of-range float→int casts are
 * undefined in C++.
 */
export function defaultEncodeOptions(dtype: DType | DTypeName): ResolvedEncodeOptions {
  return resolveDType(dtype).kind === 'int' ? integerDefaults : floatDefaults;
}

/** Fills the omitted fields of `options` with the dtype's defaults; rejects malformed options. */
export function resolveEncodeOptions(dtype: DType | DTypeName, options: EncodeOptions | undefined): ResolvedEncodeOptions {
  const defaults = defaultEncodeOptions(dtype);
  if (options === undefined) return defaults;
  if (typeof options !== 'object' || options === null) {
    throw new ArgumentError('options', 'must be an object { saturate?, rounding? } when given', options);
  }
  const { saturate, rounding } = options;
  if (saturate !== undefined && typeof saturate !== 'boolean') {
    throw new ArgumentError('options.saturate', 'must be a boolean when given', saturate);
  }
  if (rounding !== undefined && rounding !== 'nearestEven' && rounding !== 'towardZero') {
    throw new ArgumentError('options.rounding', `must be one of ${roundings.join(', ')}`, rounding);
  }
  if (saturate === undefined && rounding === undefined) return defaults;
  return { saturate: saturate ?? defaults.saturate, rounding: rounding ?? defaults.rounding };
}
