// Per-tile fp8 quantization of MLA latent KV rows (FlashMLA's V32_FP8Sparse cache): the exact rule the GPU cache writer implements.
import { decode, encode, type EncodeOptions } from '@tilekit/numeric';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  DSA_MLA_LATENT_DIM,
  DSA_MLA_NOPE_DIM,
  DSA_MLA_ROPE_DIM,
  DSA_MLA_SCALE_FLOOR,
  DSA_MLA_TILE,
  DSA_MLA_TILES,
} from '../dsaMlaCacheLayout.ts';
import { DSA_E4M3_MAX } from '../dsaShape.ts';
import { dsaCheckCount, dsaCheckFinite, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaDecodeE4m3 } from './dsaDecodeE4m3.ts';
import { dsaPowerOfTwoAtLeast } from './dsaPowerOfTwoAtLeast.ts';

/** Latent KV rows as the cache stores them: nope ≈ decode(e4m3) · scale of its tile, rope bf16 unchanged. */
export interface DsaQuantizedMlaLatent {
  /** [tokens][512] e4m3fn bit patterns of the latent ("nope") dims. */
  readonly nope: Uint8Array;
  /** [tokens][4] fp32 scales, one per 128-value tile (positive powers of two). */
  readonly scales: Float32Array;
  /** [tokens][64] bf16 bit patterns of the RoPE dims. */
  readonly rope: Uint16Array;
}

const SCALE_FLOOR_F32 = Math.fround(DSA_MLA_SCALE_FLOOR);
const SATURATE_RNE: EncodeOptions = Object.freeze({ saturate: true, rounding: 'nearestEven' });
const BF16_RNE: EncodeOptions = Object.freeze({ saturate: false, rounding: 'nearestEven' });

/**
 * A tile's scale from its amax (max |x_i| over its 128 fp32 values), in fp32 arithmetic:
 * - r = amax / 448 as ONE IEEE fp32 division rounded to nearest even (CUDA `__fdiv_rn(amax, 448.f)`);
 * - r = fmaxf(r, fp32(1e-4)) ({@link DSA_MLA_SCALE_FLOOR}; note the floor applies to amax / 448, not to amax);
 * - s = the smallest power of two ≥ r, on the bits of r: `__uint_as_float((__float_as_uint(r) + 0x7fffff) & 0xff800000)`.
 * This is FlashMLA's 2^⌈log2(max(amax / 448, 1e-4))⌉; for bf16 inputs log2 is never close enough to an integer for
 * the two forms to differ. So s ∈ [2^-13, 2^120] for finite bf16 inputs, and amax / s ∈ (224, 448] when r > 1e-4.
 * @throws DsaArgumentError for a negative or non-finite amax.
 */
export function dsaMlaTileScale(amax: number): number {
  if (!Number.isFinite(amax) || amax < 0) throw new DsaArgumentError('amax', 'must be finite and ≥ 0', amax);
  const ratio = Math.fround(Math.fround(amax) / DSA_E4M3_MAX);
  return dsaPowerOfTwoAtLeast(Math.max(ratio, SCALE_FLOOR_F32));
}

/** Throws unless every element is a finite bf16 value (fp32 whose low 16 bits are zero), naming the first offender. */
function checkBf16(argument: string, values: Float32Array): void {
  dsaCheckFinite(argument, values);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (!Object.is(decode('bf16', encode('bf16', x, BF16_RNE)), x))
      throw new DsaArgumentError(`${argument}[${i}]`, 'must be a bf16 value (the writer reads bf16)', x);
  }
}

/** max |latent[offset + i]| over one 128-value tile. */
function tileAmax(latent: Float32Array, offset: number): number {
  let amax = 0;
  for (let i = 0; i < DSA_MLA_TILE; i++) amax = Math.max(amax, Math.abs(latent[offset + i]!));
  return amax;
}

/** Quantizes token `t`'s row into `out` (the 4 tiles, then the RoPE bits). */
function quantizeToken(latent: Float32Array, t: number, out: DsaQuantizedMlaLatent): void {
  const row = t * DSA_MLA_LATENT_DIM;
  for (let tile = 0; tile < DSA_MLA_TILES; tile++) {
    const from = row + tile * DSA_MLA_TILE;
    const scale = dsaMlaTileScale(tileAmax(latent, from));
    out.scales[t * DSA_MLA_TILES + tile] = scale;
    const to = t * DSA_MLA_NOPE_DIM + tile * DSA_MLA_TILE;
    for (let i = 0; i < DSA_MLA_TILE; i++) out.nope[to + i] = encode('fp8e4m3fn', Math.fround(latent[from + i]! / scale), SATURATE_RNE);
  }
  for (let i = 0; i < DSA_MLA_ROPE_DIM; i++)
    out.rope[t * DSA_MLA_ROPE_DIM + i] = encode('bf16', latent[row + DSA_MLA_NOPE_DIM + i]!, BF16_RNE);
}

/**
 * Quantizes `tokens` latent KV rows ([tokens][576] fp32 holding bf16 values: 512 nope, then 64 rope) exactly as the GPU
 * cache writer must:
 * 1. per tile t of 128 nope values: amax_t = max |x_i| (exact in fp32), s_t = {@link dsaMlaTileScale}(amax_t);
 * 2. nope_i = e4m3fn(fp32(x_i / s_t)): the fp32 quotient (exact unless it is an fp32 subnormal, which then becomes ±0 anyway),
 *    round-to-nearest-even and saturation to ±448 (PTX `cvt.rn.satfinite.e4m3x2.f32`); −0 and negative underflows keep
 *    the sign bit (0x80);
 * 3. rope_i = the bf16 bits of x_{512+i}, unchanged.
 * Postconditions (property-tested): s_t a power of two; |decode(nope_i)| ≤ 448 and the amax element lands in [224, 448]
 * unless the floor applies; |decode(nope_i)·s_t − x_i| ≤ s_t·(½ e4m3 ulp at |x_i / s_t|); a +0 tile gives 0x00 bytes and
 * s = 2^-13; scaling a tile by 2^j (in range, above the floor) scales s_t by 2^j and keeps its bytes.
 * @throws DsaArgumentError for a bad token count, a length other than tokens·576, or a value that is not a finite bf16.
 */
export function dsaQuantizeMlaLatent(latent: Float32Array, tokens: number): DsaQuantizedMlaLatent {
  dsaCheckCount('tokens', tokens, 0);
  dsaCheckLength('latent', latent, tokens * DSA_MLA_LATENT_DIM, 'tokens·576');
  checkBf16('latent', latent);
  const out: DsaQuantizedMlaLatent = {
    nope: new Uint8Array(tokens * DSA_MLA_NOPE_DIM),
    scales: new Float32Array(tokens * DSA_MLA_TILES),
    rope: new Uint16Array(tokens * DSA_MLA_ROPE_DIM),
  };
  for (let t = 0; t < tokens; t++) quantizeToken(latent, t, out);
  return out;
}

/**
 * The bf16 values an attention kernel reads back from quantized rows, as [tokens][576] fp32: bf16(fp32(decode(nope_i) ·
 * s_t)) for the 512 nope dims and the rope bf16 values for the last 64 (tokens = scales.length / 4). The product of a
 * 4-bit significand and a power of two is exact in bf16 unless it overflows: an e4m3 of 256 at s = 2^120 (a tile whose
 * amax is within a bf16 ulp of the bf16 maximum) dequantizes to ±∞, as it does on the GPU.
 * @throws DsaArgumentError for mismatched lengths or an e4m3 NaN pattern (0x7f, 0xff) in nope.
 */
export function dsaDequantizeMlaLatent(q: DsaQuantizedMlaLatent): Float32Array {
  if (q.scales.length % DSA_MLA_TILES !== 0) throw new DsaArgumentError('q.scales', 'must hold tokens·4 elements', q.scales.length);
  const tokens = q.scales.length / DSA_MLA_TILES;
  dsaCheckLength('q.nope', q.nope, tokens * DSA_MLA_NOPE_DIM, 'tokens·512');
  dsaCheckLength('q.rope', q.rope, tokens * DSA_MLA_ROPE_DIM, 'tokens·64');
  const nope = dsaDecodeE4m3('q.nope', q.nope);
  const out = new Float32Array(tokens * DSA_MLA_LATENT_DIM);
  for (let t = 0; t < tokens; t++) {
    for (let i = 0; i < DSA_MLA_NOPE_DIM; i++) {
      const product = Math.fround(nope[t * DSA_MLA_NOPE_DIM + i]! * q.scales[t * DSA_MLA_TILES + Math.floor(i / DSA_MLA_TILE)]!);
      out[t * DSA_MLA_LATENT_DIM + i] = decode('bf16', encode('bf16', product, BF16_RNE));
    }
    for (let i = 0; i < DSA_MLA_ROPE_DIM; i++)
      out[t * DSA_MLA_LATENT_DIM + DSA_MLA_NOPE_DIM + i] = decode('bf16', q.rope[t * DSA_MLA_ROPE_DIM + i]!);
  }
  return out;
}
