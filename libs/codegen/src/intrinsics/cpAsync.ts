import { ArgumentError } from '@tilekit/numeric';
import { int32, pointer, uint32, uint64, voidType } from '../cType.ts';
import { makeCall } from '../expr.ts';
import type { Expr } from '../expr.ts';
import { lit, toExpr, variable } from '../ops.ts';
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
import type { DeviceHelper } from './deviceHelper.ts';
import { sharedAddressHelper } from './sharedAddress.ts';

/** Bytes one `cp.async` copies: 4, 8 or 16. */
export type CpAsyncBytes = 4 | 8 | 16;
/** Cache operator: `ca` (cache at all levels, L1 too) or `cg` (L2 only; 16-byte copies only). */
export type CpAsyncCache = 'ca' | 'cg';

/** Options of `cpAsync`. */
export interface CpAsyncOptions {
  /** Destination in shared memory (pointer or array), `bytes`-aligned. */
  readonly dst: Expr;
  /** Source in global memory (pointer), `bytes`-aligned. */
  readonly src: Expr;
  readonly bytes: CpAsyncBytes;
  /** Default `cg` for 16 bytes (streams past L1), else `ca` (the only one PTX allows). */
  readonly cache?: CpAsyncCache;
  /**
   * Bytes actually read from `src` (0..bytes); the rest of `dst` is zero-filled. 0 is the
   * predicated-off copy (nothing is read, so `src` may be out of bounds). Default: `bytes`.
   */
  readonly srcBytes?: ExprLike;
}

const helpers = new Map<string, DeviceHelper>();

function copyHelper(cache: CpAsyncCache, bytes: CpAsyncBytes): DeviceHelper {
  const name = `tk_cp_async_${cache}_${bytes}`;
  let h = helpers.get(name);
  if (h === undefined) {
    h = defineDeviceHelper(
      {
        name,
        doc: `cp.async.${cache}.shared.global, ${bytes} bytes; reads src_bytes (< ${bytes}: the rest is zero-filled; 0: nothing is read).`,
        params: { dst: pointer(voidType), src: pointer(voidType, { const: true }), src_bytes: uint32 },
        requires: [sharedAddressHelper.requirement],
      },
      (b, { dst, src, src_bytes }) => {
        const dstAddr = b.let('dst_addr', uint32, callHelper(sharedAddressHelper, [dst]));
        // The .global operand wants a global-state-space address, not a generic one.
        const srcAddr = b.let('src_addr', uint64, makeCall('__cvta_generic_to_global', [src], uint64));
        emitAsm(b, {
          ptx: [`cp.async.${cache}.shared.global [%0], [%1], ${bytes}, %2;`],
          inputs: [
            ['r', dstAddr],
            ['l', srcAddr],
            ['r', src_bytes],
          ],
          memory: true,
        });
      },
    );
    helpers.set(name, h);
  }
  return h;
}

/**
 * One asynchronous global → shared copy of 4, 8 or 16 bytes (`cp.async.{ca,cg}.shared.global`
 * with the `src-size` operand, sm_80+), zero-filling what `srcBytes` leaves out. Completes only
 * through `cpAsyncCommitGroup` + `cpAsyncWaitGroup` (then a barrier for other threads to see it).
 * Throws `TargetFeatureError` off CUDA sm_80+, `ArgumentError` for `cg` with fewer than 16 bytes.
 */
export function cpAsync(target: Target, options: CpAsyncOptions): Expr {
  requireIntrinsic(target, 'cp-async', 'cp.async');
  const { dst, src, bytes } = options;
  if (bytes !== 4 && bytes !== 8 && bytes !== 16) throw new ArgumentError('bytes', 'must be 4, 8 or 16', bytes);
  const cache = options.cache ?? (bytes === 16 ? 'cg' : 'ca');
  if (cache !== 'ca' && cache !== 'cg') throw new ArgumentError('cache', 'must be "ca" or "cg"', cache);
  if (cache === 'cg' && bytes !== 16) throw new ArgumentError('cache', 'cp.async.cg copies exactly 16 bytes', bytes);
  requireAddress('dst', dst);
  requireAddress('src', src);
  const srcBytes = options.srcBytes === undefined ? lit(bytes, uint32) : toExpr(options.srcBytes, lit(0, uint32));
  requireInteger('srcBytes', srcBytes);
  if (srcBytes.kind === 'literal') requireImmediate('srcBytes', Number(srcBytes.value), 0, bytes);
  return callHelper(copyHelper(cache, bytes), [dst, src, srcBytes]);
}

const commitHelper = defineDeviceHelper(
  { name: 'tk_cp_async_commit_group', doc: "cp.async.commit_group: close the group of this thread's pending cp.async copies." },
  (b) => {
    emitAsm(b, { ptx: ['cp.async.commit_group;'], memory: true });
  },
);

const waitHelper = defineDeviceHelper(
  {
    name: 'tk_cp_async_wait_group',
    doc: "cp.async.wait_group N: wait until at most N of this thread's cp.async groups are pending.",
    templateParams: ['int N'],
  },
  (b) => {
    emitAsm(b, { ptx: ['cp.async.wait_group %0;'], inputs: [['n', variable('N', int32)]], memory: true });
  },
);

/** `cp.async.commit_group` (sm_80+): the copies issued so far by this thread form one group. */
export function cpAsyncCommitGroup(target: Target): Expr {
  requireIntrinsic(target, 'cp-async', 'cp.async.commit_group');
  return callHelper(commitHelper, []);
}

/**
 * `cp.async.wait_group N` (sm_80+): wait until at most `pending` (an immediate in [0, 255]; 0 waits
 * for all) of this thread's committed groups are still in flight.
 */
export function cpAsyncWaitGroup(target: Target, pending: number): Expr {
  requireIntrinsic(target, 'cp-async', 'cp.async.wait_group');
  requireImmediate('pending', pending, 0, 255);
  return callHelper(waitHelper, [], [String(pending)]);
}

const mbarrierArriveHelper = defineDeviceHelper(
  {
    name: 'tk_cp_async_mbarrier_arrive_noinc',
    doc: "cp.async.mbarrier.arrive.noinc: one arrival on `bar` once all of this thread's earlier cp.async copies have landed.",
    params: { bar: pointer(voidType) },
    requires: [sharedAddressHelper.requirement],
  },
  (b, { bar }) => {
    const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [bar]));
    emitAsm(b, { ptx: ['cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];'], inputs: [['r', addr]], memory: true });
  },
);

/**
 * `cp.async.mbarrier.arrive.noinc` (sm_80+): the mbarrier at `bar` receives one arrival once every
 * cp.async this thread issued before it has completed, without the thread waiting (`.noinc`: the
 * arrival counts against the barrier's expected count, so init it to include one per such thread).
 * The consumer that waits on the barrier sees the copied bytes; before wgmma or TMA read them it
 * still fences the async proxy (`fenceProxyAsyncShared`), as for any generic-proxy write.
 */
export function cpAsyncMbarrierArrive(target: Target, bar: Expr): Expr {
  requireIntrinsic(target, 'cp-async', 'cp.async.mbarrier.arrive');
  requireAddress('bar', bar);
  return callHelper(mbarrierArriveHelper, [bar]);
}
