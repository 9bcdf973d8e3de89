import { array, float32, int32, pointer, uint8, uint32, uint64 } from '../cType.ts';
import { add, addressOf, bitXor, cast, eq, index, lt, mul, ne, shr } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import type { Target } from '../target.ts';
import { kernelParam } from '../kernel/kernelParam.ts';
import { KernelSignature } from '../kernel/kernelSignature.ts';
import { fenceMbarrierInit, fenceProxyAsyncShared } from '../intrinsics/asyncFence.ts';
import {
  clusterCtaRank,
  clusterSync,
  loadSharedClusterU32,
  mapaShared,
  mbarrierArriveClusterWarp,
  storeAsyncClusterV4,
  storeSharedClusterU32,
} from '../intrinsics/cluster.ts';
import { cpAsync, cpAsyncCommitGroup, cpAsyncWaitGroup } from '../intrinsics/cpAsync.ts';
import { electSync } from '../intrinsics/electSync.ts';
import { exp2Approx, log2Approx, packFloat2 } from '../intrinsics/fastMath.ts';
import { namedBarrierArrive, namedBarrierSync } from '../intrinsics/namedBarrier.ts';
import { reduceAddF32, reduceAddF32x4 } from '../intrinsics/reduceAdd.ts';
import { gridDependencyLaunchDependents, gridDependencyWait } from '../intrinsics/gridDependency.ts';
import { ldmatrix } from '../intrinsics/ldmatrix.ts';
import {
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierInval,
  mbarrierTryWaitParity,
  mbarrierWaitParity,
  mbarrierWaitParityCluster,
} from '../intrinsics/mbarrier.ts';
import { setMaxNReg } from '../intrinsics/setmaxnreg.ts';
import { sharedAddress } from '../intrinsics/sharedAddress.ts';
import { bulkCommitGroup, bulkWaitGroup, prefetchTensorMap, tmaLoad, tmaStore } from '../intrinsics/tma.ts';
import { bulkReduceAddF32, bulkStoreF32 } from '../intrinsics/bulkReduce.ts';
import { fenceProxyAsyncGlobal, releaseAddGlobal, waitGlobalAtLeast } from '../intrinsics/globalFlag.ts';
import type { TmaRank } from '../intrinsics/tma.ts';

/**
 * One translation unit that calls every intrinsic wrapper `target` supports (sm_80: cp.async in
 * all sizes and cache modes, commit/wait, ldmatrix x1/x2/x4 with and without .trans, shared
 * address conversion, mbarrier init/arrive/inval, ex2/lg2.approx, f16x2/bf16x2 packing, named
 * barriers, red.global.add.f32; sm_90a additionally expect_tx, try_wait and the
 * wait loop, both fences, TMA loads and stores of rank 1..5, bulk commit/wait(.read), the bulk fp32 reduce-add,
 * prefetch.tensormap, elect.sync, griddepcontrol, setmaxnreg, and the cluster set: %cluster_ctarank,
 * barrier.cluster, mapa, st.async to a peer CTA, word loads and stores to a peer CTA, remote warp arrivals and the
 * cluster-scope wait). The nvcc test compiles it once
 * per arch with warnings as errors; its sm_90a text is the golden snapshot of the emitted helpers.
 */
export function intrinsicSamplesSource(target: Target): string {
  const src = new SourceBuilder({ dialect: target, header: [`tilekit intrinsic wrappers on ${target.name}`, 'generated; do not edit'] });
  const hopper = target.has('tma');
  src.function(
    {
      name: 'tk_intrinsics_sm80',
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(128)],
      params: { in: pointer(uint8, { const: true, restrict: true }), out: pointer(uint32, { restrict: true }), n: int32 },
    },
    (b, { in: input, out, n }) => {
      const tile = target.declareShared(b, 'tile', uint8, 128 * 16, { align: 128 });
      const bar = target.declareShared(b, 'bar', uint64, 1, { align: 8 });
      const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
      const at = b.let('at', int32, mul(tid, 16));
      const inBounds = b.let('in_bounds', uint32, cast(lt(at, n), uint32));
      b.comment('every cp.async size and cache mode; the 16-byte copy zero-fills out of bounds');
      b.expr(cpAsync(target, { dst: addressOf(index(tile, at)), src: add(input, at), bytes: 16, srcBytes: mul(inBounds, 16) }));
      b.expr(cpAsync(target, { dst: addressOf(index(tile, at)), src: add(input, at), bytes: 16, cache: 'ca' }));
      b.expr(cpAsync(target, { dst: addressOf(index(tile, at)), src: add(input, at), bytes: 8 }));
      b.expr(cpAsync(target, { dst: addressOf(index(tile, at)), src: add(input, at), bytes: 4, srcBytes: 2 }));
      b.expr(cpAsyncCommitGroup(target));
      b.expr(cpAsyncWaitGroup(target, 1));
      b.expr(cpAsyncWaitGroup(target, 0));
      b.push(target.syncThreads());
      const regs = b.declare('regs', array(uint32, 4));
      const row = addressOf(index(tile, mul(cast(target.laneId(), int32), 16)));
      for (const count of [1, 2, 4] as const) {
        for (const trans of [false, true]) b.expr(ldmatrix(target, { count, trans, dst: regs, src: row }));
      }
      b.if(eq(tid, 0), (t) => {
        t.expr(mbarrierInit(target, bar, 1));
        t.expr(mbarrierArrive(target, bar));
        t.expr(mbarrierInval(target, bar));
      });
      b.comment('fast-math exp2/log2, fp32 pairs packed to f16x2/bf16x2, named barriers');
      const x = b.let('x', float32, cast(index(regs, 0), float32));
      const e = b.let('e', float32, log2Approx(target, exp2Approx(target, x)));
      const packed = b.let('packed', uint32, add(packFloat2(target, 'fp16', x, e), packFloat2(target, 'bf16', e, x)));
      b.expr(namedBarrierArrive(target, 1, 64));
      b.expr(namedBarrierSync(target, 2, 128));
      b.expr(reduceAddF32(target, cast(out, pointer(float32)), e));
      const sum = b.let('sum', uint32, add(add(index(regs, 0), index(regs, 1)), add(index(regs, 2), index(regs, 3))));
      b.assign(index(out, tid), add(add(sum, packed), sharedAddress(target, tile)));
    },
  );
  if (!hopper) return src.render();

  const sig = new KernelSignature('tk_intrinsics_sm90', target, {
    map: kernelParam.tensorMap(),
    out: kernelParam.pointer(uint32),
    x: kernelParam.i32(),
  });
  sig.defineEntry(src, { launchBounds: { maxThreads: 128 } }, (b, { map, out, x }) => {
    const box = target.declareShared(b, 'box', uint8, 4096, { align: 128 });
    const bar = target.declareShared(b, 'bar', uint64, 1, { align: 8 });
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
    b.expr(gridDependencyWait(target));
    b.if(eq(tid, 0), (t) => {
      t.expr(prefetchTensorMap(target, map));
      t.expr(mbarrierInit(target, bar, 1));
      t.expr(fenceMbarrierInit(target));
    });
    b.push(target.syncThreads());
    const leader = b.let('leader', target.has('elect-sync') ? electSync(target).type : uint32, electSync(target));
    b.if(leader, (t) => {
      t.if(eq(shr(tid, 5), 0), (u) => {
        u.expr(mbarrierArriveExpectTx(target, bar, 5 * 64));
        for (const rank of [1, 2, 3, 4, 5] as const) {
          u.expr(tmaLoad(target, { dst: box, map, bar, coords: Array.from({ length: rank }, (_, i) => (i === 0 ? x : i)) }));
        }
      });
    });
    b.expr(mbarrierWaitParity(target, bar, 0));
    const again = b.let('again', uint32, cast(mbarrierTryWaitParity(target, bar, 0), uint32));
    b.expr(fenceProxyAsyncShared(target));
    b.push(target.syncThreads());
    b.if(eq(tid, 0), (t) => {
      for (const rank of [1, 2, 3, 4, 5] as TmaRank[])
        t.expr(tmaStore(target, { map, src: box, coords: Array.from({ length: rank }, (_, i) => (i === 0 ? x : 0)) }));
      t.expr(bulkStoreF32(target, cast(out, pointer(float32)), cast(addressOf(index(box, 0)), pointer(float32, { const: true })), 256));
      t.expr(bulkReduceAddF32(target, cast(out, pointer(float32)), cast(addressOf(index(box, 0)), pointer(float32, { const: true })), 256));
      t.expr(bulkCommitGroup(target));
      t.expr(bulkWaitGroup(target, 1, { read: true }));
      t.expr(bulkWaitGroup(target, 0));
      t.expr(fenceProxyAsyncGlobal(target));
      t.expr(releaseAddGlobal(target, cast(out, pointer(int32)), 1));
      t.expr(waitGlobalAtLeast(target, cast(out, pointer(int32, { const: true })), 1));
      t.expr(mbarrierInval(target, bar));
    });
    const f = b.let('f', float32, cast(x, float32));
    b.expr(reduceAddF32x4(target, cast(out, pointer(float32)), [f, f, f, f]));
    b.expr(gridDependencyLaunchDependents(target));
    b.assign(index(out, tid), add(again, sharedAddress(target, box)));
  });

  // setmaxnreg takes effect only under a register cap at entry: __launch_bounds__(threads, 1), and
  // each warpgroup's role one branch of a single if/else.
  src.function(
    {
      name: 'tk_intrinsics_setmaxnreg',
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(256, 1)],
      params: { out: pointer(uint32, { restrict: true }) },
    },
    (b, { out }) => {
      const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
      b.if(
        ne(shr(tid, 7), 0),
        (t) => {
          t.expr(setMaxNReg(target, 'inc', 232));
          t.assign(index(out, tid), 1);
        },
        (e) => {
          e.expr(setMaxNReg(target, 'dec', 40));
          e.assign(index(out, tid), 2);
        },
      );
    },
  );

  // Two CTAs of a cluster swap one float4 per thread through distributed shared memory: each arms its
  // full barrier, stores into the peer's buffer completing bytes on the peer's full barrier, waits its
  // own, then frees the peer's buffer with one arrival per warp on the peer's empty barrier.
  src.function(
    {
      name: 'tk_intrinsics_cluster',
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(128)],
      params: { out: pointer(float32, { restrict: true }) },
    },
    (b, { out }) => {
      const buf = target.declareShared(b, 'buf', float32, 128 * 4, { align: 16 });
      const bars = target.declareShared(b, 'bars', uint64, 2, { align: 8 });
      const empty = addressOf(index(bars, 1));
      const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
      b.if(eq(tid, 0), (t) => {
        t.expr(mbarrierInit(target, bars, 1));
        t.expr(mbarrierInit(target, empty, 4));
        t.expr(fenceMbarrierInit(target));
        t.expr(mbarrierArriveExpectTx(target, bars, 128 * 16));
      });
      b.expr(clusterSync(target));
      const peer = b.let('peer', uint32, bitXor(clusterCtaRank(target), 1));
      const remote = b.let('remote', uint32, mapaShared(target, addressOf(index(buf, mul(tid, 4))), peer));
      const remoteFull = b.let('remote_full', uint32, mapaShared(target, bars, peer));
      const v = b.let('v', float32, cast(tid, float32));
      b.expr(storeAsyncClusterV4(target, remote, remoteFull, [v, v, v, v]));
      b.expr(mbarrierWaitParityCluster(target, bars, 0));
      b.assign(index(out, tid), index(buf, mul(tid, 4)));
      b.expr(mbarrierArriveClusterWarp(target, mapaShared(target, empty, peer)));
      b.expr(mbarrierWaitParityCluster(target, empty, 0));
      b.comment("word stores into the peer's buffer, a cluster barrier, then word loads of the peer's");
      const word = b.let('word', uint32, mapaShared(target, addressOf(index(buf, tid)), peer));
      b.expr(storeSharedClusterU32(target, word, tid));
      b.expr(clusterSync(target));
      b.assign(index(out, add(tid, 128)), cast(loadSharedClusterU32(target, word), float32));
      b.expr(clusterSync(target));
    },
  );
  return src.render();
}
