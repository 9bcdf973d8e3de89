import { ArgumentError } from '@tilekit/numeric';
import { float32, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireIntrinsic } from './deviceHelper.ts';

/** The 8-bit float formats `cvt` packs two fp32 values into (OCP e4m3 and e5m2). */
export type Fp8PackFormat = 'fp8e4m3fn' | 'fp8e5m2';

const ptxType: Readonly<Record<Fp8PackFormat, string>> = { fp8e4m3fn: 'e4m3x2', fp8e5m2: 'e5m2x2' };

function packHelper(format: Fp8PackFormat) {
  const t = ptxType[format];
  return defineDeviceHelper(
    {
      name: `tk_pack_${t}`,
      doc: `cvt.rn.satfinite.${t}.f32: two floats rounded to nearest-even ${format} (saturated to the largest finite), lo in bits 0-7, hi in 8-15.`,
      returns: uint32,
      params: { lo: float32, hi: float32 },
    },
    (b, { lo, hi }) => {
      const d = b.declare('d', uint32);
      emitAsm(b, {
        ptx: ['.reg .b16 t;', `cvt.rn.satfinite.${t}.f32 t, %2, %1;`, 'cvt.u32.u16 %0, t;'],
        outputs: [['=r', d]],
        inputs: [
          ['f', lo],
          ['f', hi],
        ],
        volatile: false,
      });
      b.return(d);
    },
  );
}

const helpers: Readonly<Record<Fp8PackFormat, ReturnType<typeof packHelper>>> = {
  fp8e4m3fn: packHelper('fp8e4m3fn'),
  fp8e5m2: packHelper('fp8e5m2'),
};

/**
 * `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` (sm_89+; among tilekit's CUDA targets sm_90a): two fp32
 * values rounded to nearest-even 8-bit floats, finite overflow saturated to ±max (NaN stays NaN),
 * packed in the low 16 bits of an `unsigned int`: `lo` in bits 0-7, `hi` in bits 8-15.
 * @throws ArgumentError for another format or a non-fp32 operand.
 */
export function packFp8x2(target: Target, format: Fp8PackFormat, lo: Expr, hi: Expr): Expr {
  if (format !== 'fp8e4m3fn' && format !== 'fp8e5m2') throw new ArgumentError('format', 'must be "fp8e4m3fn" or "fp8e5m2"', format);
  requireIntrinsic(target, 'wgmma', `cvt.rn.satfinite.${ptxType[format]}.f32`);
  for (const [name, e] of [
    ['lo', lo],
    ['hi', hi],
  ] as const) {
    if (e.type.kind !== 'float' || e.type.bits !== 32) throw new ArgumentError(name, 'must be a float (fp32) expression', e.type.kind);
  }
  return callHelper(helpers[format], [lo, hi]);
}
