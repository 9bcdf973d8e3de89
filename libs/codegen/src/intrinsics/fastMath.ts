import { ArgumentError } from '@tilekit/numeric';
import { float32, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireIntrinsic } from './deviceHelper.ts';

// Pure register arithmetic: plain (non-volatile) asm, so ptxas schedules these like FMULs.
const exp2Helper = defineDeviceHelper(
  {
    name: 'tk_exp2_approx',
    doc: 'ex2.approx.ftz.f32: 2^x to 2 ulp (subnormals flushed; -inf gives +0).',
    returns: float32,
    params: { x: float32 },
  },
  (b, { x }) => {
    const y = b.declare('y', float32);
    emitAsm(b, { ptx: ['ex2.approx.ftz.f32 %0, %1;'], outputs: [['=f', y]], inputs: [['f', x]], volatile: false });
    b.return(y);
  },
);

const log2Helper = defineDeviceHelper(
  { name: 'tk_log2_approx', doc: 'lg2.approx.ftz.f32: log2(x) (+0 gives -inf).', returns: float32, params: { x: float32 } },
  (b, { x }) => {
    const y = b.declare('y', float32);
    emitAsm(b, { ptx: ['lg2.approx.ftz.f32 %0, %1;'], outputs: [['=f', y]], inputs: [['f', x]], volatile: false });
    b.return(y);
  },
);

const packHelpers = {
  fp16: defineDeviceHelper(
    {
      name: 'tk_pack_f16x2',
      doc: 'cvt.rn.f16x2.f32: two floats rounded to nearest-even fp16, lo in bits 0-15, hi in 16-31.',
      returns: uint32,
      params: { lo: float32, hi: float32 },
    },
    (b, { lo, hi }) => {
      const d = b.declare('d', uint32);
      emitAsm(b, {
        ptx: ['cvt.rn.f16x2.f32 %0, %2, %1;'],
        outputs: [['=r', d]],
        inputs: [
          ['f', lo],
          ['f', hi],
        ],
        volatile: false,
      });
      b.return(d);
    },
  ),
  bf16: defineDeviceHelper(
    {
      name: 'tk_pack_bf16x2',
      doc: 'cvt.rn.bf16x2.f32: two floats rounded to nearest-even bf16, lo in bits 0-15, hi in 16-31.',
      returns: uint32,
      params: { lo: float32, hi: float32 },
    },
    (b, { lo, hi }) => {
      const d = b.declare('d', uint32);
      emitAsm(b, {
        ptx: ['cvt.rn.bf16x2.f32 %0, %2, %1;'],
        outputs: [['=r', d]],
        inputs: [
          ['f', lo],
          ['f', hi],
        ],
        volatile: false,
      });
      b.return(d);
    },
  ),
} as const;

function requireFloat(argument: string, e: Expr): void {
  if (e.type.kind !== 'float' || e.type.bits !== 32) throw new ArgumentError(argument, 'must be a float (fp32) expression', e.type.kind);
}

/**
 * `ex2.approx.ftz.f32` (every CUDA target): 2^x with at most 2 ulp of error, the exponential of
 * the exp2-domain online softmax. `-inf` gives `+0` (a fully masked score contributes nothing).
 */
export function exp2Approx(target: Target, x: Expr): Expr {
  requireIntrinsic(target, 'threads', 'ex2.approx.ftz.f32');
  requireFloat('x', x);
  return callHelper(exp2Helper, [x]);
}

/** `lg2.approx.ftz.f32` (every CUDA target): log2(x); `+0` gives `-inf`. */
export function log2Approx(target: Target, x: Expr): Expr {
  requireIntrinsic(target, 'threads', 'lg2.approx.ftz.f32');
  requireFloat('x', x);
  return callHelper(log2Helper, [x]);
}

/**
 * `cvt.rn.{f16x2,bf16x2}.f32` (every CUDA target, sm_80+): two fp32 values rounded to nearest-even
 * and packed in one 32-bit register, `lo` in the low half — the layout of a `.f16x2`/`.bf16x2`
 * MMA operand register whose first element is `lo`.
 */
export function packFloat2(target: Target, dtype: 'fp16' | 'bf16', lo: Expr, hi: Expr): Expr {
  requireIntrinsic(target, 'threads', `cvt.rn.${dtype === 'fp16' ? 'f16x2' : 'bf16x2'}.f32`);
  if (dtype !== 'fp16' && dtype !== 'bf16') throw new ArgumentError('dtype', 'must be "fp16" or "bf16"', dtype);
  requireFloat('lo', lo);
  requireFloat('hi', hi);
  return callHelper(packHelpers[dtype], [lo, hi]);
}
