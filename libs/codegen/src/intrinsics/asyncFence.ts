import type { Expr } from '../expr.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireIntrinsic } from './deviceHelper.ts';

const proxyHelper = defineDeviceHelper(
  {
    name: 'tk_fence_proxy_async_shared_cta',
    doc: "fence.proxy.async.shared::cta: order this thread's generic-proxy shared accesses with the async proxy (TMA, wgmma).",
  },
  (b) => emitAsm(b, { ptx: ['fence.proxy.async.shared::cta;'], memory: true }),
);

const mbarrierInitHelper = defineDeviceHelper(
  {
    name: 'tk_fence_mbarrier_init',
    doc: 'fence.mbarrier_init.release.cluster: release prior mbarrier.init to the cluster (and the async proxy).',
  },
  (b) => emitAsm(b, { ptx: ['fence.mbarrier_init.release.cluster;'], memory: true }),
);

/**
 * `fence.proxy.async.shared::cta` (sm_90): shared memory written by ordinary stores that TMA
 * (store) or wgmma reads next needs this in each writing thread before the barrier; likewise
 * after the async proxy wrote what ordinary loads read without an mbarrier.
 */
export function fenceProxyAsyncShared(target: Target): Expr {
  requireIntrinsic(target, 'tma', 'fence.proxy.async.shared::cta');
  return callHelper(proxyHelper, []);
}

/** `fence.mbarrier_init.release.cluster` (sm_90): after `mbarrierInit`, before the barriers are used by TMA or other CTAs. */
export function fenceMbarrierInit(target: Target): Expr {
  requireIntrinsic(target, 'clusters', 'fence.mbarrier_init.release.cluster');
  return callHelper(mbarrierInitHelper, []);
}
