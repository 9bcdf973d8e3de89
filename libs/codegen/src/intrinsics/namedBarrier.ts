import { int32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { lit } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireImmediate, requireIntrinsic } from './deviceHelper.ts';

const syncHelper = defineDeviceHelper(
  {
    name: 'tk_named_barrier_sync',
    doc: 'bar.sync id, count: wait until `count` threads (whole warps) reached barrier `id`.',
    params: { id: int32, count: int32 },
  },
  (b, { id, count }) =>
    emitAsm(b, {
      ptx: ['bar.sync %0, %1;'],
      inputs: [
        ['r', id],
        ['r', count],
      ],
      memory: true,
    }),
);

const arriveHelper = defineDeviceHelper(
  {
    name: 'tk_named_barrier_arrive',
    doc: 'bar.arrive id, count: count this warp at barrier `id` without waiting.',
    params: { id: int32, count: int32 },
  },
  (b, { id, count }) =>
    emitAsm(b, {
      ptx: ['bar.arrive %0, %1;'],
      inputs: [
        ['r', id],
        ['r', count],
      ],
      memory: true,
    }),
);

/**
 * `bar.sync id, count` (every CUDA target): a barrier among `count` threads (a multiple of 32) of
 * the block on hardware barrier `id` in [1, 15] (0 is `__syncthreads`). With {@link
 * namedBarrierArrive} it orders warpgroups that take turns (one signals, the other waits).
 */
export function namedBarrierSync(target: Target, id: Expr | number, count: number): Expr {
  requireIntrinsic(target, 'threads', 'bar.sync');
  if (typeof id === 'number') requireImmediate('id', id, 1, 15);
  requireImmediate('count', count, 32, 1024, 32);
  return callHelper(syncHelper, [typeof id === 'number' ? lit(id, int32) : id, lit(count, int32)]);
}

/** `bar.arrive id, count`: counts the calling warp at barrier `id` and goes on (see {@link namedBarrierSync}). */
export function namedBarrierArrive(target: Target, id: Expr | number, count: number): Expr {
  requireIntrinsic(target, 'threads', 'bar.arrive');
  if (typeof id === 'number') requireImmediate('id', id, 1, 15);
  requireImmediate('count', count, 32, 1024, 32);
  return callHelper(arriveHelper, [typeof id === 'number' ? lit(id, int32) : id, lit(count, int32)]);
}
