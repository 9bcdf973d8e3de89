import { float32, int32, pointer, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { lit, toExpr, type ExprLike } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireAddress, requireIntrinsic } from './deviceHelper.ts';
import { sharedAddressHelper } from './sharedAddress.ts';

const reduceAddHelper = defineDeviceHelper(
  {
    name: 'tk_bulk_reduce_add_f32',
    doc: 'cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32: adds `bytes` of fp32 from shared memory into global memory in L2, tracked by cp.async.bulk groups.',
    params: { dst: pointer(float32), src: pointer(float32, { const: true }), bytes: int32 },
    requires: [sharedAddressHelper.requirement],
  },
  (b, { dst, src, bytes }) => {
    const srcAddr = b.let('src_addr', uint32, callHelper(sharedAddressHelper, [src]));
    emitAsm(b, {
      ptx: ['cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;'],
      inputs: [
        ['l', dst],
        ['r', srcAddr],
        ['r', bytes],
      ],
      memory: true,
    });
  },
);

/**
 * `cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32` (sm_90): element-wise `dst[i] +=
 * src[i]` for `bytes / 4` floats, performed by the TMA unit in L2 (whole sectors instead of one
 * atomic per element) — how attention's backward folds a block's dQ tile into fp32 dq_acc. `dst`
 * and `src` 16-byte aligned, `bytes` a multiple of 16; the shared source must be written (and
 * `fence.proxy.async`-ed) before, and not overwritten until `bulkWaitGroup(…, { read: true })`.
 * Follow with `bulkCommitGroup`. Adds from different blocks land in any order (not bitwise
 * reproducible).
 */
export function bulkReduceAddF32(target: Target, dst: Expr, src: Expr, bytes: ExprLike): Expr {
  requireIntrinsic(target, 'tma', 'cp.reduce.async.bulk .add.f32');
  requireAddress('dst', dst);
  requireAddress('src', src);
  return callHelper(reduceAddHelper, [dst, src, toExpr(bytes, lit(0, int32))]);
}

const copyHelper = defineDeviceHelper(
  {
    name: 'tk_bulk_store',
    doc: 'cp.async.bulk.global.shared::cta.bulk_group: copies `bytes` from shared to global memory by the TMA unit, tracked by cp.async.bulk groups.',
    params: { dst: pointer(float32), src: pointer(float32, { const: true }), bytes: int32 },
    requires: [sharedAddressHelper.requirement],
  },
  (b, { dst, src, bytes }) => {
    const srcAddr = b.let('src_addr', uint32, callHelper(sharedAddressHelper, [src]));
    emitAsm(b, {
      ptx: ['cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;'],
      inputs: [
        ['l', dst],
        ['r', srcAddr],
        ['r', bytes],
      ],
      memory: true,
    });
  },
);

/**
 * `cp.async.bulk.global.shared::cta.bulk_group` (sm_90): a plain bulk copy of `bytes` (a multiple
 * of 16; both addresses 16-byte aligned) from shared to global memory, with the same group
 * tracking and source rules as {@link bulkReduceAddF32} (the store before later reduce-adds).
 */
export function bulkStoreF32(target: Target, dst: Expr, src: Expr, bytes: ExprLike): Expr {
  requireIntrinsic(target, 'tma', 'cp.async.bulk (shared to global)');
  requireAddress('dst', dst);
  requireAddress('src', src);
  return callHelper(copyHelper, [dst, src, toExpr(bytes, lit(0, int32))]);
}
