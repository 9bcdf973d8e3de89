// Per-token fp8 quantization of the index keys: the exact rule the GPU cache writer implements.
import { encode, type EncodeOptions } from '@tilekit/numeric';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_AMAX_FLOOR, DSA_E4M3_MAX, DSA_INDEX_HEAD_DIM, type DsaScaleFormat } from '../dsaShape.ts';
import { dsaCheckCount, dsaCheckFinite, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaDecodeE4m3 } from './dsaDecodeE4m3.ts';
import { dsaPowerOfTwoAtLeast } from './dsaPowerOfTwoAtLeast.ts';

/** Index keys quantized per token: key ≈ decode(value) · scale. */
export interface DsaQuantizedIndexKeys {
  /** [tokens][128] e4m3fn bit patterns. */
  readonly values: Uint8Array;
  /** [tokens] fp32 scales (positive; powers of two for ue8m0). */
  readonly scales: Float32Array;
}

/** One quantized index key, as stored in one cache slot. */
export interface DsaIndexKeyToken {
  /** 128 e4m3fn bit patterns. */
  readonly values: Uint8Array;
  /** Its fp32 scale. */
  readonly scale: number;
}

const FLOOR_F32 = Math.fround(DSA_AMAX_FLOOR);
const SATURATE_RNE: EncodeOptions = Object.freeze({ saturate: true, rounding: 'nearestEven' });

/**
 * A token's scale from its amax (max |k_i| over its 128 fp32 values), in fp32 arithmetic:
 * - a = fmaxf(amax, fp32(1e-4)) ({@link DSA_AMAX_FLOOR} rounded to fp32, 0x38d1b717);
 * - r = a / 448 as ONE IEEE fp32 division rounded to nearest even (CUDA `__fdiv_rn(a, 448.f)`, or `a / 448.f`
 *   without fast-math; NOT `a * (1.f / 448)`, which differs in the last bit for some a);
 * - `fp32`: s = r; `ue8m0`: s = the smallest power of two ≥ r, computed on the bits of r as
 *   `__uint_as_float((__float_as_uint(r) + 0x7fffff) & 0xff800000)` (r is a positive normal, ≥ 2.2e-7).
 *   This equals `exp2f(ceilf(log2f(r)))` whenever log2f is exact (vLLM's form); the bit form has no such caveat.
 * So s ≥ 2.2e-7 is a positive normal fp32 and, for ue8m0, r ≤ s < 2r.
 * @throws DsaArgumentError for a negative or non-finite amax, or an unknown format.
 */
export function dsaIndexKeyScale(amax: number, scaleFormat: DsaScaleFormat): number {
  if (!Number.isFinite(amax) || amax < 0) throw new DsaArgumentError('amax', 'must be finite and ≥ 0', amax);
  const ratio = Math.fround(Math.max(Math.fround(amax), FLOOR_F32) / DSA_E4M3_MAX);
  if (scaleFormat === 'fp32') return ratio;
  if (scaleFormat === 'ue8m0') return dsaPowerOfTwoAtLeast(ratio);
  throw new DsaArgumentError('scaleFormat', "must be 'fp32' or 'ue8m0'", scaleFormat);
}

/** max |keys[offset + i]| over one token's 128 values. */
function tokenAmax(keys: Float32Array, offset: number): number {
  let amax = 0;
  for (let i = 0; i < DSA_INDEX_HEAD_DIM; i++) amax = Math.max(amax, Math.abs(keys[offset + i]!));
  return amax;
}

/**
 * Quantizes `tokens` index keys ([tokens][128] fp32, in practice bf16 values widened) to e4m3fn with one
 * fp32 scale per token, exactly as the GPU cache writer must:
 * 1. amax = max_i |k_i| over the token's 128 values (exact in fp32);
 * 2. s = {@link dsaIndexKeyScale}(amax, scaleFormat) (floor 1e-4, one fp32 division by 448, ue8m0 rounds up to a power of two);
 * 3. value_i = e4m3fn(fp32(k_i / s)): the IEEE fp32 quotient (round to nearest even), then converted to e4m3fn with
 *    round-to-nearest-even and saturation to ±448 (CUDA `__nv_cvt_float_to_fp8(k / s, __NV_SATFINITE, __NV_E4M3)`,
 *    PTX `cvt.rn.satfinite.e4m3x2.f32`); −0 and negative underflows keep the sign bit (0x80).
 * Postconditions (property-tested): |decode(v_i)·s − k_i| ≤ s·(½ e4m3 ulp at |k_i/s|) + 2^-24·|k_i|;
 * |decode(v_i)| ≤ 448; the amax element becomes ±448 for `fp32` and lies in [224, 448] for `ue8m0` when amax ≥ 1e-4;
 * an all-(+0) token gives all-0x00 values; multiplying a token by 2^j (in range) multiplies s by 2^j and keeps the values.
 * @throws DsaArgumentError for a bad token count, a length other than tokens·128, a non-finite key or an unknown format.
 */
export function dsaQuantizeIndexKeys(keys: Float32Array, tokens: number, scaleFormat: DsaScaleFormat): DsaQuantizedIndexKeys {
  dsaCheckCount('tokens', tokens, 0);
  dsaCheckLength('keys', keys, tokens * DSA_INDEX_HEAD_DIM, 'tokens·128');
  dsaCheckFinite('keys', keys);
  const values = new Uint8Array(tokens * DSA_INDEX_HEAD_DIM);
  const scales = new Float32Array(tokens);
  for (let t = 0; t < tokens; t++) {
    const offset = t * DSA_INDEX_HEAD_DIM;
    const scale = dsaIndexKeyScale(tokenAmax(keys, offset), scaleFormat);
    scales[t] = scale;
    for (let i = 0; i < DSA_INDEX_HEAD_DIM; i++) {
      values[offset + i] = encode('fp8e4m3fn', Math.fround(keys[offset + i]! / scale), SATURATE_RNE);
    }
  }
  return { values, scales };
}

/**
 * The dequantized key of one token: decode(values[i]) · scale for its 128 values, exact in float64
 * (a 4-bit significand times a 24-bit one).
 * @throws DsaArgumentError unless `values` holds 128 patterns, none of them NaN (0x7f, 0xff).
 */
export function dsaDequantizeIndexKey(token: DsaIndexKeyToken): Float64Array {
  dsaCheckLength('token.values', token.values, DSA_INDEX_HEAD_DIM, 'the index head dim');
  const out = dsaDecodeE4m3('token.values', token.values);
  for (let i = 0; i < out.length; i++) out[i] = out[i]! * token.scale;
  return out;
}
