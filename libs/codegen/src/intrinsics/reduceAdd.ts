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

const redF32x4 = defineDeviceHelper(
  {
    name: 'tk_red_add_v4_f32',
    doc: 'red.global.add.v4.f32 [p], {x, y, z, w}: four adjacent floats added atomically (16-byte aligned), no return trip.',
    params: { p: pointer(float32), x: float32, y: float32, z: float32, w: float32 },
  },
  (b, { p, x, y, z, w }) =>
    emitAsm(b, {
      ptx: ['red.global.add.v4.f32 [%0], {%1, %2, %3, %4};'],
      inputs: [
        ['l', p],
        ['f', x],
        ['f', y],
        ['f', z],
        ['f', w],
      ],
      memory: true,
    }),
);

/**
 * `red.global.add.v4.f32` (sm_90, the `vector-red` feature): `p[0..3] += v[0..3]`, each element
 * atomically, `p` 16-byte aligned — a quarter of the reduction operations of {@link reduceAddF32}
 * for fp32 partials whose threads hold four adjacent columns. Order unspecified, as there.
 */
export function reduceAddF32x4(target: Target, p: Expr, v: readonly [Expr, Expr, Expr, Expr]): Expr {
  requireIntrinsic(target, 'vector-red', 'red.global.add.v4.f32');
  requireAddress('p', p);
  v.forEach((x, i) => {
    if (x.type.kind !== 'float' || x.type.bits !== 32) throw new ArgumentError(`v[${i}]`, 'must be a float (fp32) expression', x.type.kind);
  });
  return callHelper(redF32x4, [p, ...v]);
}
