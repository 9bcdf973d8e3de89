import { ArgumentError } from '@tilekit/numeric';
import { float32, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { add, call, mul, shr } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireIntrinsic } from './deviceHelper.ts';
import type { Fp8PackFormat } from './packFp8.ts';

const ptxType: Readonly<Record<Fp8PackFormat, string>> = { fp8e4m3fn: 'e4m3x2', fp8e5m2: 'e5m2x2' };

function dequantHelper(format: Fp8PackFormat) {
  const t = ptxType[format];
  return defineDeviceHelper(
    {
      name: `tk_dequant_${t}_bf16x2`,
      doc: `cvt.rn.f16x2.${t} (exact), both halves widened to fp32, times scale, cvt.rn.bf16x2.f32: element 0 in bits 0-7 → bits 0-15.`,
      returns: uint32,
      params: { pair: uint32, scale: float32 },
    },
    (b, { pair, scale }) => {
      const d = b.declare('d', uint32);
      emitAsm(b, {
        ptx: [
          '.reg .b16 p, h0, h1;',
          '.reg .b32 hh;',
          '.reg .f32 f0, f1;',
          'cvt.u16.u32 p, %1;',
          `cvt.rn.f16x2.${t} hh, p;`,
          'mov.b32 {h0, h1}, hh;',
          'cvt.f32.f16 f0, h0;',
          'cvt.f32.f16 f1, h1;',
          'mul.rn.f32 f0, f0, %2;',
          'mul.rn.f32 f1, f1, %2;',
          'cvt.rn.bf16x2.f32 %0, f1, f0;',
        ],
        outputs: [['=r', d]],
        inputs: [
          ['r', pair],
          ['f', scale],
        ],
        volatile: false,
      });
      b.return(d);
    },
  );
}

const helpers: Readonly<Record<Fp8PackFormat, ReturnType<typeof dequantHelper>>> = {
  fp8e4m3fn: dequantHelper('fp8e4m3fn'),
  fp8e5m2: dequantHelper('fp8e5m2'),
};

/**
 * Two 8-bit floats (OCP e4m3 or e5m2; element 0 in bits 0-7 of `pair`, element 1 in bits 8-15, higher
 * bits ignored) times the fp32 `scale`, rounded to nearest-even bf16 and packed: element 0 in bits
 * 0-15, element 1 in 16-31 (the order they had in memory). Exact whenever `scale` is a power of two
 * and the products stay normal in bf16 (the FP8 MLA cache's tile scales): the fp8 → f16 step and
 * the widening are exact, and an fp8 significand fits bf16's 8 bits. sm_89+; among tilekit's CUDA
 * targets sm_90a (gated like the fp8 pack).
 * @throws ArgumentError for another format, a `pair` that is not a 32-bit unsigned integer, or a non-fp32 `scale`.
 */
export function dequantFp8x2ToBf16x2(target: Target, format: Fp8PackFormat, pair: Expr, scale: Expr): Expr {
  if (format !== 'fp8e4m3fn' && format !== 'fp8e5m2') throw new ArgumentError('format', 'must be "fp8e4m3fn" or "fp8e5m2"', format);
  requireIntrinsic(target, 'wgmma', `cvt.rn.f16x2.${ptxType[format]}`);
  if (pair.type.kind !== 'int' || pair.type.bits !== 32 || pair.type.signed)
    throw new ArgumentError('pair', 'must be an unsigned 32-bit integer expression', pair.type.kind);
  if (scale.type.kind !== 'float' || scale.type.bits !== 32)
    throw new ArgumentError('scale', 'must be a float (fp32) expression', scale.type.kind);
  return callHelper(helpers[format], [pair, scale]);
}

/** Which e4m3 pair of a 32-bit word {@link dequantE4m3x2Pow2ToBf16x2} takes: bytes 0–1 or bytes 2–3. */
export type Fp8WordHalf = 'low' | 'high';

/** prmt selectors moving bytes (0, 1) or (2, 3) into bits 0–7 and 16–23, zeros elsewhere. */
const prmtSelector: Readonly<Record<Fp8WordHalf, number>> = { low: 0x4140, high: 0x4342 };

function pow2Helper(half: Fp8WordHalf) {
  return defineDeviceHelper(
    {
      name: `tk_dequant_e4m3x2_pow2_bf16x2_${half === 'low' ? 'lo' : 'hi'}`,
      doc:
        `e4m3 bytes ${half === 'low' ? '0-1' : '2-3'} of a word placed as bf16 bits (sign, then exponent and mantissa 4 bits down: ` +
        'the value times 2^-120, subnormals included), then two exact bf16x2 multiplies: by 2^60 and by the factor 2^60 * scale.',
      returns: uint32,
      params: { word: uint32, factor: uint32 },
    },
    (b, { word, factor }) => {
      const d = b.declare('d', uint32);
      emitAsm(b, {
        ptx: [
          '.reg .b32 x, s, m, c;',
          `prmt.b32 x, %1, 0, 0x${prmtSelector[half].toString(16)};`,
          'shl.b32 s, x, 8;',
          'and.b32 s, s, 0x80008000;',
          'shl.b32 m, x, 4;',
          'and.b32 m, m, 0x07F007F0;',
          'or.b32 x, s, m;',
          'mov.b32 c, 0x5D805D80;',
          'mul.rn.bf16x2 x, x, c;',
          'mul.rn.bf16x2 %0, x, %2;',
        ],
        outputs: [['=r', d]],
        inputs: [
          ['r', word],
          ['r', factor],
        ],
        volatile: false,
      });
      b.return(d);
    },
  );
}

const pow2Helpers: Readonly<Record<Fp8WordHalf, ReturnType<typeof pow2Helper>>> = { low: pow2Helper('low'), high: pow2Helper('high') };

/**
 * The factor {@link dequantE4m3x2Pow2ToBf16x2} multiplies by for the fp32 power-of-two `scale`: the bf16 bits of
 * scale · 2^60 in both halves of a 32-bit word (60 added to the float's exponent field, then its top 16 bits; exact for a
 * power of two in [2^-186, 2^67]). Let it once per scale and reuse it for every word that scale covers.
 * @throws ArgumentError for a non-fp32 `scale`.
 */
export function e4m3Pow2ScaleFactor(scale: Expr): Expr {
  if (scale.type.kind !== 'float' || scale.type.bits !== 32)
    throw new ArgumentError('scale', 'must be a float (fp32) expression', scale.type.kind);
  const bits = call('__float_as_uint', [scale], uint32, { pure: true });
  return mul(shr(add(bits, 60 << 23), 16), 0x10001);
}

/**
 * Two e4m3 values of a 32-bit word (`half` 'low': bytes 0 and 1; 'high': bytes 2 and 3) times a power-of-two scale,
 * as packed bf16 (the lower byte in bits 0–15) — without the conversion pipe: the byte's sign and 7 magnitude bits are
 * placed as bf16 bits whose value is exactly the e4m3 value times 2^-120 (e4m3 subnormals land on bf16 subnormals), then
 * multiplied (mul.rn.bf16x2, exact for powers of two) by 2^60 and by `factor` = e4m3Pow2ScaleFactor(scale). Equal to
 * bf16(e4m3 · scale) bit for bit (GPU-tested over every byte) for every non-NaN byte while the product stays a normal
 * bf16; the e4m3 NaN patterns (0x7f, 0xff) give finite garbage. sm_90 (bf16x2 multiply).
 * @throws ArgumentError for a `word` or `factor` that is not a 32-bit unsigned integer, or another `half`.
 */
export function dequantE4m3x2Pow2ToBf16x2(target: Target, word: Expr, half: Fp8WordHalf, factor: Expr): Expr {
  requireIntrinsic(target, 'wgmma', 'mul.rn.bf16x2');
  if (half !== 'low' && half !== 'high') throw new ArgumentError('half', "must be 'low' or 'high'", half);
  for (const [name, e] of [
    ['word', word],
    ['factor', factor],
  ] as const) {
    if (e.type.kind !== 'int' || e.type.bits !== 32 || e.type.signed)
      throw new ArgumentError(name, 'must be an unsigned 32-bit integer expression', e.type.kind);
  }
  return callHelper(pow2Helpers[half], [word, factor]);
}
