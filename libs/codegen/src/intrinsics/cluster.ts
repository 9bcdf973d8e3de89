// Thread-block clusters (sm_90): the CTA's rank in its cluster, the cluster barrier, and distributed
// shared memory — a peer CTA's shared address (`mapa`), stores into it that complete on its mbarrier
// (`st.async`), plain word loads and stores to it (`ld/st.shared::cluster`, ordered by the cluster
// barrier), and warp arrivals on its mbarriers. The cluster-scope acquire wait that pairs with
// them is `mbarrierWaitParityCluster` (mbarrier.ts).
import { float32, pointer, uint32, voidType } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { lit, toExpr } from '../ops.ts';
import type { ExprLike } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireAddress, requireInteger, requireIntrinsic } from './deviceHelper.ts';
import { sharedAddressHelper } from './sharedAddress.ts';

const rankHelper = defineDeviceHelper(
  { name: 'tk_cluster_ctarank', doc: "mov.u32 %cluster_ctarank: this CTA's rank in its cluster.", returns: uint32 },
  (b) => {
    const rank = b.declare('rank', uint32);
    emitAsm(b, { ptx: ['mov.u32 %0, %%cluster_ctarank;'], outputs: [['=r', rank]] });
    b.return(rank);
  },
);

const syncHelper = defineDeviceHelper(
  {
    name: 'tk_cluster_sync',
    doc: 'barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every non-exited thread of the cluster meets here.',
  },
  (b) => emitAsm(b, { ptx: ['barrier.cluster.arrive.release;', 'barrier.cluster.wait.acquire;'], memory: true }),
);

const mapaHelper = defineDeviceHelper(
  {
    name: 'tk_mapa_shared',
    doc: 'mapa.shared::cluster.u32: the shared::cluster address of the same offset in CTA `rank` of the cluster.',
    returns: uint32,
    params: { ptr: pointer(voidType), rank: uint32 },
    requires: [sharedAddressHelper.requirement],
  },
  (b, { ptr, rank }) => {
    const local = b.let('local', uint32, callHelper(sharedAddressHelper, [ptr]));
    const remote = b.declare('remote', uint32);
    emitAsm(b, {
      ptx: ['mapa.shared::cluster.u32 %0, %1, %2;'],
      outputs: [['=r', remote]],
      inputs: [
        ['r', local],
        ['r', rank],
      ],
    });
    b.return(remote);
  },
);

const storeAsyncV4Helper = defineDeviceHelper(
  {
    name: 'tk_st_async_v4_f32',
    doc:
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32: four floats to a peer CTA's shared memory, " +
      "completing 16 bytes of transaction on the peer's mbarrier (release, cluster scope).",
    params: { addr: uint32, bar: uint32, x: float32, y: float32, z: float32, w: float32 },
  },
  (b, { addr, bar, x, y, z, w }) =>
    emitAsm(b, {
      ptx: ['st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%2, %3, %4, %5}, [%1];'],
      inputs: [
        ['r', addr],
        ['r', bar],
        ['f', x],
        ['f', y],
        ['f', z],
        ['f', w],
      ],
      memory: true,
    }),
);

const remoteArriveWarpHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_arrive_cluster_warp',
    doc:
      'Whole warp: bar.warp.sync (memory ordering among the lanes), then lane 0 arrives once on an mbarrier ' +
      'at a shared::cluster address (release, cluster scope).',
    params: { addr: uint32 },
  },
  (b, { addr }) =>
    emitAsm(b, {
      ptx: [
        '.reg .pred is_lane0;',
        '.reg .u32 lane;',
        'mov.u32 lane, %%laneid;',
        'bar.warp.sync 0xffffffff;',
        'setp.eq.u32 is_lane0, lane, 0;',
        '@is_lane0 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];',
      ],
      inputs: [['r', addr]],
      memory: true,
    }),
);

const loadU32Helper = defineDeviceHelper(
  {
    name: 'tk_ld_shared_cluster_u32',
    doc: "ld.shared::cluster.u32: one word of a cluster CTA's shared memory at a shared::cluster address (weak; order it with a cluster barrier).",
    returns: uint32,
    params: { addr: uint32 },
  },
  (b, { addr }) => {
    const value = b.declare('value', uint32);
    emitAsm(b, { ptx: ['ld.shared::cluster.u32 %0, [%1];'], outputs: [['=r', value]], inputs: [['r', addr]], memory: true });
    b.return(value);
  },
);

const storeU32Helper = defineDeviceHelper(
  {
    name: 'tk_st_shared_cluster_u32',
    doc: "st.shared::cluster.u32: one word into a cluster CTA's shared memory at a shared::cluster address (weak; order it with a cluster barrier).",
    params: { addr: uint32, value: uint32 },
  },
  (b, { addr, value }) =>
    emitAsm(b, {
      ptx: ['st.shared::cluster.u32 [%0], %1;'],
      inputs: [
        ['r', addr],
        ['r', value],
      ],
      memory: true,
    }),
);

function u32(argument: string, x: ExprLike): Expr {
  const e = toExpr(x, lit(0, uint32));
  requireInteger(argument, e);
  return e;
}

/** `%cluster_ctarank` (sm_90): this CTA's rank in its cluster (`unsigned`; 0 without a cluster launch). */
export function clusterCtaRank(target: Target): Expr {
  requireIntrinsic(target, 'clusters', '%cluster_ctarank');
  return callHelper(rankHelper, []);
}

/**
 * `barrier.cluster.arrive.release` + `barrier.cluster.wait.acquire` (sm_90): waits until every
 * non-exited thread of the cluster arrived; shared-memory accesses (and mbarrier inits) before it
 * are visible to the whole cluster after it. Every thread of every CTA must reach it.
 */
export function clusterSync(target: Target): Expr {
  requireIntrinsic(target, 'clusters', 'barrier.cluster');
  return callHelper(syncHelper, []);
}

/** `mapa.shared::cluster` (sm_90): the `unsigned` shared::cluster address of `ptr` (this CTA's shared memory) in cluster CTA `rank`. */
export function mapaShared(target: Target, ptr: Expr, rank: ExprLike): Expr {
  requireIntrinsic(target, 'clusters', 'mapa.shared::cluster');
  requireAddress('ptr', ptr);
  return callHelper(mapaHelper, [ptr, u32('rank', rank)]);
}

/**
 * `st.async…mbarrier::complete_tx::bytes.v4.f32` (sm_90): four floats to the 16-byte aligned
 * shared::cluster address `addr` of a peer CTA, completing 16 transaction bytes on the peer's
 * mbarrier at shared::cluster address `bar` (which its CTA armed with `mbarrierArriveExpectTx`).
 */
export function storeAsyncClusterV4(target: Target, addr: Expr, bar: Expr, values: readonly [Expr, Expr, Expr, Expr]): Expr {
  requireIntrinsic(target, 'clusters', 'st.async');
  return callHelper(storeAsyncV4Helper, [u32('addr', addr), u32('bar', bar), ...values]);
}

/**
 * A warp's arrival on a peer CTA's mbarrier (`bar` a shared::cluster address): every lane of the
 * converged warp calls it; `bar.warp.sync` orders the lanes' earlier accesses, then lane 0 arrives
 * once (release, cluster scope). For barriers that count warps.
 */
export function mbarrierArriveClusterWarp(target: Target, bar: Expr): Expr {
  requireIntrinsic(target, 'clusters', 'mbarrier.arrive.release.cluster (warp)');
  return callHelper(remoteArriveWarpHelper, [u32('bar', bar)]);
}

/**
 * `ld.shared::cluster.u32` (sm_90): the 32-bit word at the shared::cluster address `addr` (from
 * {@link mapaShared}; any CTA of the cluster, this one included), as `unsigned`. A weak load: the
 * peer's stores must be ordered before it, e.g. by {@link clusterSync}.
 */
export function loadSharedClusterU32(target: Target, addr: Expr): Expr {
  requireIntrinsic(target, 'clusters', 'ld.shared::cluster');
  return callHelper(loadU32Helper, [u32('addr', addr)]);
}

/**
 * `st.shared::cluster.u32` (sm_90): stores the 32-bit `value` at the shared::cluster address `addr`
 * (from {@link mapaShared}). A weak store: the reader must be ordered after it, e.g. by {@link clusterSync}.
 */
export function storeSharedClusterU32(target: Target, addr: Expr, value: ExprLike): Expr {
  requireIntrinsic(target, 'clusters', 'st.shared::cluster');
  return callHelper(storeU32Helper, [u32('addr', addr), u32('value', value)]);
}
