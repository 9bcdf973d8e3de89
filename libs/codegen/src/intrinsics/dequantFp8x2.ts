import { ArgumentError } from '@tilekit/numeric';
import { float32, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
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
