// Counters in global memory that order work across blocks: a release add by the block that finished,
// an acquire spin by the block that waits for it (attention backward's key-ordered dQ), and the fence
// that orders the TMA unit's global writes with them.
import { int32, pointer } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { lt, toExpr, type ExprLike } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireAddress, requireIntrinsic } from './deviceHelper.ts';

const loadAcquireHelper = defineDeviceHelper(
  {
    name: 'tk_ld_acquire_gpu_s32',
    doc: 'ld.acquire.gpu.global.s32: what the writer released before its release add is visible after this load.',
    returns: int32,
    params: { p: pointer(int32, { const: true }) },
  },
  (b, { p }) => {
    const v = b.declare('v', int32);
    emitAsm(b, { ptx: ['ld.acquire.gpu.global.s32 %0, [%1];'], outputs: [['=r', v]], inputs: [['l', p]], memory: true });
    b.return(v);
  },
);

const waitAtLeastHelper = defineDeviceHelper(
  {
    name: 'tk_wait_global_at_least',
    doc: 'Spin (acquire loads at GPU scope) until *p >= value.',
    params: { p: pointer(int32, { const: true }), value: int32 },
    requires: [loadAcquireHelper.requirement],
  },
  (b, { p, value }) => {
    b.while(lt(callHelper(loadAcquireHelper, [p]), value), () => {});
  },
);

const releaseAddHelper = defineDeviceHelper(
  {
    name: 'tk_red_release_gpu_add_s32',
    doc: 'red.release.gpu.global.add.s32: *p += v after every earlier memory access of this thread (release at GPU scope).',
    params: { p: pointer(int32), v: int32 },
  },
  (b, { p, v }) =>
    emitAsm(b, {
      ptx: ['red.release.gpu.global.add.s32 [%0], %1;'],
      inputs: [
        ['l', p],
        ['r', v],
      ],
      memory: true,
    }),
);

const fenceGlobalHelper = defineDeviceHelper(
  {
    name: 'tk_fence_proxy_async_global',
    doc: "fence.proxy.async.global: order this thread's async-proxy (TMA) global accesses with its generic-proxy ones.",
  },
  (b) => emitAsm(b, { ptx: ['fence.proxy.async.global;'], memory: true }),
);

/**
 * Waits until the int32 counter at `p` (global) is at least `value`, spinning on
 * `ld.acquire.gpu` (every CUDA target): what the blocks that raised it released before their
 * {@link releaseAddGlobal} is visible afterwards. The caller must know the counter gets there:
 * only wait on blocks that never wait on this one and were scheduled no later.
 */
export function waitGlobalAtLeast(target: Target, p: Expr, value: ExprLike): Expr {
  requireIntrinsic(target, 'threads', 'ld.acquire.gpu.global.s32');
  requireAddress('p', p);
  return callHelper(waitAtLeastHelper, [p, toExpr(value)]);
}

/** `red.release.gpu.global.add.s32` (every CUDA target): `*p += v` after all of this thread's earlier memory accesses. */
export function releaseAddGlobal(target: Target, p: Expr, v: ExprLike): Expr {
  requireIntrinsic(target, 'threads', 'red.release.gpu.global.add.s32');
  requireAddress('p', p);
  return callHelper(releaseAddHelper, [p, toExpr(v)]);
}

/**
 * `fence.proxy.async.global` (sm_90): orders the TMA unit's global accesses of this thread (bulk
 * reductions, complete per `bulkWaitGroup`) with its ordinary ones, e.g. before a release add that
 * publishes them, or after an acquire that permits them.
 */
export function fenceProxyAsyncGlobal(target: Target): Expr {
  requireIntrinsic(target, 'tma', 'fence.proxy.async.global');
  return callHelper(fenceGlobalHelper, []);
}
