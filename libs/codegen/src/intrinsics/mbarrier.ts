import { bool, pointer, uint32, uint64, voidType } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { ne, not, toExpr, lit } from '../ops.ts';
import type { ExprLike } from '../ops.ts';
import type { Target } from '../target.ts';
import {
  callHelper,
  defineDeviceHelper,
  emitAsm,
  requireAddress,
  requireImmediate,
  requireInteger,
  requireIntrinsic,
} from './deviceHelper.ts';
import { sharedAddressHelper } from './sharedAddress.ts';

// An mbarrier is a 64-bit, 8-byte aligned object in shared memory (declare it with
// `target.declareShared(b, name, uint64, n, { align: 8 })`); every wrapper takes its address.
// init/arrive/inval use `.shared` (PTX 7.0, sm_80); expect_tx and try_wait need sm_90.

const barPtr = pointer(voidType);
const needs = [sharedAddressHelper.requirement];

const initHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_init',
    doc: 'mbarrier.init.shared.b64: phase 0, `count` expected arrivals, tx-count 0.',
    params: { bar: barPtr, count: uint32 },
    requires: needs,
  },
  (b, { bar, count }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    emitAsm(b, {
      ptx: ['mbarrier.init.shared.b64 [%0], %1;'],
      inputs: [
        ['r', addr],
        ['r', count],
      ],
      memory: true,
    });
  },
);

const arriveHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_arrive',
    doc: 'mbarrier.arrive.shared.b64: one arrival (release, CTA scope); returns the phase state token.',
    returns: uint64,
    params: { bar: barPtr },
    requires: needs,
  },
  (b, { bar }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    const state = b.declare('state', uint64);
    emitAsm(b, { ptx: ['mbarrier.arrive.shared.b64 %0, [%1];'], outputs: [['=l', state]], inputs: [['r', addr]], memory: true });
    b.return(state);
  },
);

// A warp releases a ring stage with one arrival (the barrier counts warps): `bar.warp.sync`
// first, which orders every lane's earlier shared-memory accesses before lane 0's arrive (a
// release at CTA scope), so the producer's next write into the stage cannot race a lane's read.
const arriveWarpHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_arrive_warp',
    doc: 'Whole warp: bar.warp.sync (memory ordering among the lanes), then lane 0 arrives once on the mbarrier (release, CTA scope).',
    params: { bar: barPtr },
    requires: needs,
  },
  (b, { bar }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    emitAsm(b, {
      ptx: [
        '.reg .pred is_lane0;',
        '.reg .u32 lane;',
        '.reg .b64 state;',
        'mov.u32 lane, %%laneid;',
        'bar.warp.sync 0xffffffff;',
        'setp.eq.u32 is_lane0, lane, 0;',
        '@is_lane0 mbarrier.arrive.shared.b64 state, [%0];',
      ],
      inputs: [['r', addr]],
      memory: true,
    });
  },
);

const arriveExpectTxHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_arrive_expect_tx',
    doc: 'mbarrier.arrive.expect_tx.shared::cta.b64: expect tx_bytes more transaction bytes, then arrive once.',
    returns: uint64,
    params: { bar: barPtr, tx_bytes: uint32 },
    requires: needs,
  },
  (b, { bar, tx_bytes }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    const state = b.declare('state', uint64);
    emitAsm(b, {
      ptx: ['mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;'],
      outputs: [['=l', state]],
      inputs: [
        ['r', addr],
        ['r', tx_bytes],
      ],
      memory: true,
    });
    b.return(state);
  },
);

/** A bounded `try_wait.parity` helper (`instruction` its PTX, without operands) and the loop helper on it. */
function parityWaitHelpers(names: { readonly tryWait: string; readonly wait: string }, instruction: string, what: string) {
  const tryWait = defineDeviceHelper(
    { name: names.tryWait, doc: `${instruction}: ${what}`, returns: bool, params: { bar: barPtr, parity: uint32 }, requires: needs },
    (b, { bar, parity }) => {
      const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
      const done = b.declare('done', uint32);
      emitAsm(b, {
        ptx: ['.reg .pred complete;', `${instruction} complete, [%1], %2;`, 'selp.u32 %0, 1, 0, complete;'],
        outputs: [['=r', done]],
        inputs: [
          ['r', addr],
          ['r', parity],
        ],
        memory: true,
      });
      b.return(ne(done, 0));
    },
  );
  const wait = defineDeviceHelper(
    {
      name: names.wait,
      doc: `Spin on ${instruction.replace(/\.shared::cta\.b64$/, '')} until the phase with this parity has completed.`,
      params: { bar: barPtr, parity: uint32 },
      requires: [tryWait.requirement],
    },
    (b, { bar, parity }) => {
      b.while(not(callHelper(tryWait, [bar, parity])), () => {});
    },
  );
  return { tryWait, wait };
}

const ctaWait = parityWaitHelpers(
  { tryWait: 'tk_mbarrier_try_wait_parity', wait: 'tk_mbarrier_wait_parity' },
  'mbarrier.try_wait.parity.shared::cta.b64',
  'has the phase with this parity completed? (acquire, CTA scope; may suspend a while)',
);
const tryWaitHelper = ctaWait.tryWait;
const waitHelper = ctaWait.wait;

const clusterWait = parityWaitHelpers(
  { tryWait: 'tk_mbarrier_try_wait_parity_cluster', wait: 'tk_mbarrier_wait_parity_cluster' },
  'mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64',
  'has the phase completed? (acquire at cluster scope: what arrivers of other CTAs released is visible)',
);

const invalHelper = defineDeviceHelper(
  {
    name: 'tk_mbarrier_inval',
    doc: "mbarrier.inval.shared.b64: end the object's life (before reusing its memory).",
    params: { bar: barPtr },
    requires: needs,
  },
  (b, { bar }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    emitAsm(b, { ptx: ['mbarrier.inval.shared.b64 [%0];'], inputs: [['r', addr]], memory: true });
  },
);

function u32(argument: string, x: ExprLike): Expr {
  const e = toExpr(x, lit(0, uint32));
  requireInteger(argument, e);
  return e;
}

/**
 * `mbarrier.init` (sm_80+): phase 0 with `count` expected arrivals (a literal must lie in
 * [1, 2^20 - 1]). One thread initialises; make it visible before use (`fenceMbarrierInit` for
 * the async proxy / cluster, then a barrier).
 */
export function mbarrierInit(target: Target, bar: Expr, count: ExprLike): Expr {
  requireIntrinsic(target, 'mbarrier', 'mbarrier.init');
  requireAddress('bar', bar);
  const c = u32('count', count);
  if (c.kind === 'literal') requireImmediate('count', Number(c.value), 1, (1 << 20) - 1);
  return callHelper(initHelper, [bar, c]);
}

/** `mbarrier.arrive` (sm_80+): one arrival; the result (`unsigned long long`) is the phase token (discardable). */
export function mbarrierArrive(target: Target, bar: Expr): Expr {
  requireIntrinsic(target, 'mbarrier', 'mbarrier.arrive');
  requireAddress('bar', bar);
  return callHelper(arriveHelper, [bar]);
}

/**
 * A warp's release of a stage it read: every lane of the (converged) warp calls it; the lanes
 * synchronise with `bar.warp.sync` (which orders their shared-memory accesses) and lane 0 arrives
 * once. Use it wherever an mbarrier counts warps rather than threads.
 */
export function mbarrierArriveWarp(target: Target, bar: Expr): Expr {
  requireIntrinsic(target, 'mbarrier', 'mbarrier.arrive (warp)');
  requireAddress('bar', bar);
  return callHelper(arriveWarpHelper, [bar]);
}

/**
 * `mbarrier.arrive.expect_tx` (sm_90): raise the phase's expected transaction bytes by `txBytes`
 * (a literal must lie in [0, 2^20 - 1]) and arrive, the producer side of a TMA load.
 */
export function mbarrierArriveExpectTx(target: Target, bar: Expr, txBytes: ExprLike): Expr {
  requireIntrinsic(target, 'mbarrier-tx', 'mbarrier.arrive.expect_tx');
  requireAddress('bar', bar);
  const tx = u32('txBytes', txBytes);
  if (tx.kind === 'literal') requireImmediate('txBytes', Number(tx.value), 0, (1 << 20) - 1);
  return callHelper(arriveExpectTxHelper, [bar, tx]);
}

/** `mbarrier.try_wait.parity` (sm_90): one bounded wait; `bool`, true once the phase of `parity` (0/1) completed. */
export function mbarrierTryWaitParity(target: Target, bar: Expr, parity: ExprLike): Expr {
  requireIntrinsic(target, 'mbarrier-tx', 'mbarrier.try_wait.parity');
  requireAddress('bar', bar);
  return callHelper(tryWaitHelper, [bar, u32('parity', parity)]);
}

/** Loop on `mbarrier.try_wait.parity` (sm_90) until the phase of `parity` completed (its writes are then visible). */
export function mbarrierWaitParity(target: Target, bar: Expr, parity: ExprLike): Expr {
  requireIntrinsic(target, 'mbarrier-tx', 'mbarrier.try_wait.parity loop');
  requireAddress('bar', bar);
  return callHelper(waitHelper, [bar, u32('parity', parity)]);
}

/** `mbarrier.inval` (sm_80+): invalidate before the memory is reused for anything else. */
export function mbarrierInval(target: Target, bar: Expr): Expr {
  requireIntrinsic(target, 'mbarrier', 'mbarrier.inval');
  requireAddress('bar', bar);
  return callHelper(invalHelper, [bar]);
}

/**
 * Loop on `mbarrier.try_wait.parity.acquire.cluster` (sm_90) on a local mbarrier: what other CTAs
 * released before arriving on it (remote arrivals, `st.async` completions) is visible after it.
 */
export function mbarrierWaitParityCluster(target: Target, bar: Expr, parity: ExprLike): Expr {
  requireIntrinsic(target, 'clusters', 'mbarrier.try_wait.parity.acquire.cluster');
  requireAddress('bar', bar);
  return callHelper(clusterWait.wait, [bar, u32('parity', parity)]);
}
