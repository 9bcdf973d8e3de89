import { float32, pointer } from '../cType.ts';
import type { Expr } from '../expr.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireAddress, requireIntrinsic } from './deviceHelper.ts';
import { ArgumentError } from '@tilekit/numeric';

const redF32 = defineDeviceHelper(
  {
    name: 'tk_red_add_f32',
    doc: 'red.global.add.f32 [p], v: an atomic add whose result nobody reads (no return trip).',
    params: { p: pointer(float32), v: float32 },
  },
  (b, { p, v }) =>
    emitAsm(b, {
      ptx: ['red.global.add.f32 [%0], %1;'],
      inputs: [
        ['l', p],
        ['f', v],
      ],
      memory: true,
    }),
);

/**
 * `red.global.add.f32` (every CUDA target): `*p += v` atomically, without returning the old value
 * — the fp32 accumulation of partial results from many blocks (attention backward's dQ). The order
 * of the adds is unspecified, so sums are not bitwise reproducible; deterministic paths store
 * per-split partials instead.
 */
export function reduceAddF32(target: Target, p: Expr, v: Expr): Expr {
  requireIntrinsic(target, 'threads', 'red.global.add.f32');
  requireAddress('p', p);
  if (v.type.kind !== 'float' || v.type.bits !== 32) throw new ArgumentError('v', 'must be a float (fp32) expression', v.type.kind);
  return callHelper(redF32, [p, v]);
}
