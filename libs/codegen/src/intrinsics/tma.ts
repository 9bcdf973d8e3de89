import { ArgumentError } from '@tilekit/numeric';
import { int32, pointer, typeToString, uint32, voidType } from '../cType.ts';
import { CodegenTypeError } from '../errors.ts';
import type { Expr } from '../expr.ts';
import { addressOf, lit, toExpr, variable } from '../ops.ts';
import type { ExprLike } from '../ops.ts';
import type { ParamSpec } from '../function.ts';
import { rangeOf } from '../range.ts';
import type { Target } from '../target.ts';
import { tensorMapType } from '../kernel/kernelParam.ts';
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

/** A TMA tensor rank: 1 to 5 coordinates. */
export type TmaRank = 1 | 2 | 3 | 4 | 5;

/** Options of `tmaLoad`. */
export interface TmaLoadOptions {
  /** Destination box in shared memory (128-byte aligned; 1024 with 128B swizzle). */
  readonly dst: Expr;
  /** The tensor map: a `tk_tensor_map` kernel parameter (its address is taken) or a pointer to one. */
  readonly map: Expr;
  /** The mbarrier whose transaction count the copy's bytes complete. */
  readonly bar: Expr;
  /** Element coordinates of the box origin, innermost (dimension 0) first; out-of-bounds parts are zero-filled. */
  readonly coords: readonly ExprLike[];
}

/** Options of `tmaStore`. */
export interface TmaStoreOptions {
  readonly map: Expr;
  /** Source box in shared memory (write it, then `fenceProxyAsyncShared` and a barrier first). */
  readonly src: Expr;
  /**
   * Box origin, innermost first, every coordinate >= 0: the parts past the far end of the tensor are
   * not written, but a box that starts before it (a negative coordinate, which loads allow) makes
   * the store fault with CUDA_ERROR_ILLEGAL_INSTRUCTION (measured on an H200, driver 13.0).
   */
  readonly coords: readonly ExprLike[];
}

const coordNames = ['c0', 'c1', 'c2', 'c3', 'c4'] as const;
const helpers = new Map<string, DeviceHelper>();

function coordParams(rank: TmaRank): Record<string, ParamSpec> {
  return Object.fromEntries(coordNames.slice(0, rank).map((n) => [n, int32]));
}

function tensorList(first: number, rank: TmaRank): string {
  return `{${Array.from({ length: rank }, (_, i) => `%${first + i}`).join(', ')}}`;
}

function loadHelper(rank: TmaRank): DeviceHelper {
  const name = `tk_tma_load_${rank}d`;
  let h = helpers.get(name);
  if (h === undefined) {
    h = defineDeviceHelper(
      {
        name,
        doc: `cp.async.bulk.tensor.${rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.`,
        params: { dst: pointer(voidType), map: pointer(voidType, { const: true }), bar: pointer(voidType), ...coordParams(rank) },
        requires: [sharedAddressHelper.requirement],
      },
      (b, params) => {
        const p = params as Record<string, Expr>;
        const dstAddr = b.let('dst_addr', uint32, callHelper(sharedAddressHelper, [p['dst'] as Expr]));
        const barAddr = b.let('bar_addr', uint32, callHelper(sharedAddressHelper, [p['bar'] as Expr]));
        emitAsm(b, {
          ptx: [
            `cp.async.bulk.tensor.${rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, ${tensorList(2, rank)}], [%${2 + rank}];`,
          ],
          inputs: [
            ['r', dstAddr],
            ['l', p['map'] as Expr],
            ...coordNames.slice(0, rank).map((n) => ['r', p[n] as Expr] as const),
            ['r', barAddr],
          ],
          memory: true,
        });
      },
    );
    helpers.set(name, h);
  }
  return h;
}

function storeHelper(rank: TmaRank): DeviceHelper {
  const name = `tk_tma_store_${rank}d`;
  let h = helpers.get(name);
  if (h === undefined) {
    h = defineDeviceHelper(
      {
        name,
        doc: `cp.async.bulk.tensor.${rank}d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.`,
        params: { map: pointer(voidType, { const: true }), src: pointer(voidType, { const: true }), ...coordParams(rank) },
        requires: [sharedAddressHelper.requirement],
      },
      (b, params) => {
        const p = params as Record<string, Expr>;
        const srcAddr = b.let('src_addr', uint32, callHelper(sharedAddressHelper, [p['src'] as Expr]));
        emitAsm(b, {
          ptx: [`cp.async.bulk.tensor.${rank}d.global.shared::cta.tile.bulk_group [%0, ${tensorList(1, rank)}], [%${1 + rank}];`],
          inputs: [['l', p['map'] as Expr], ...coordNames.slice(0, rank).map((n) => ['r', p[n] as Expr] as const), ['r', srcAddr]],
          memory: true,
        });
      },
    );
    helpers.set(name, h);
  }
  return h;
}

const commitHelper = defineDeviceHelper(
  { name: 'tk_bulk_commit_group', doc: "cp.async.bulk.commit_group: close the group of this thread's pending bulk (TMA store) copies." },
  (b) => emitAsm(b, { ptx: ['cp.async.bulk.commit_group;'], memory: true }),
);

const waitHelper = defineDeviceHelper(
  {
    name: 'tk_bulk_wait_group',
    doc: 'cp.async.bulk.wait_group N: wait until at most N bulk groups are pending (writes done).',
    templateParams: ['int N'],
  },
  (b) => emitAsm(b, { ptx: ['cp.async.bulk.wait_group %0;'], inputs: [['n', variable('N', int32)]], memory: true }),
);

const waitReadHelper = defineDeviceHelper(
  {
    name: 'tk_bulk_wait_group_read',
    doc: 'cp.async.bulk.wait_group.read N: wait until at most N bulk groups still read their sources.',
    templateParams: ['int N'],
  },
  (b) => emitAsm(b, { ptx: ['cp.async.bulk.wait_group.read %0;'], inputs: [['n', variable('N', int32)]], memory: true }),
);

const prefetchHelper = defineDeviceHelper(
  {
    name: 'tk_prefetch_tensormap',
    doc: 'prefetch.tensormap: bring a tensor map (generic address of a param/const/global) into the cache.',
    params: { map: pointer(voidType, { const: true }) },
  },
  (b, { map }) => emitAsm(b, { ptx: ['prefetch.tensormap [%0];'], inputs: [['l', map]], memory: true }),
);

/** The address of a tensor map: `&map` for a `tk_tensor_map` value, the pointer itself otherwise. */
function mapAddress(map: Expr): Expr {
  if (map.type.kind === 'opaque' && map.type.cpp === tensorMapType.cpp) return addressOf(map);
  if (map.type.kind === 'pointer') return map;
  throw new CodegenTypeError('map', 'must be a tk_tensor_map (kernelParam.tensorMap()) or a pointer to one', typeToString(map.type));
}

function coordsOf(coords: readonly ExprLike[]): { rank: TmaRank; exprs: Expr[] } {
  if (!Array.isArray(coords) || coords.length < 1 || coords.length > 5)
    throw new ArgumentError('coords', 'must hold 1 to 5 coordinates', coords?.length);
  const exprs = coords.map((c, i) => {
    const e = toExpr(c, lit(0, int32));
    requireInteger(`coords[${i}]`, e);
    return e;
  });
  return { rank: coords.length as TmaRank, exprs };
}

/**
 * TMA load (sm_90): `cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`
 * copies the map's box at `coords` into `dst` and completes its byte count on `bar` (arm it with
 * `mbarrierArriveExpectTx` for the box bytes; wait with `mbarrierWaitParity`). One thread issues it.
 */
export function tmaLoad(target: Target, options: TmaLoadOptions): Expr {
  requireIntrinsic(target, 'tma', 'cp.async.bulk.tensor (TMA load)');
  requireAddress('dst', options.dst);
  requireAddress('bar', options.bar);
  const { rank, exprs } = coordsOf(options.coords);
  return callHelper(loadHelper(rank), [options.dst, mapAddress(options.map), options.bar, ...exprs]);
}

/**
 * TMA store (sm_90): `cp.async.bulk.tensor.{1..5}d.global.shared::cta.tile.bulk_group` writes the
 * box from `src` at `coords`; follow with `bulkCommitGroup` and `bulkWaitGroup`. Only the part
 * inside the tensor is written, as long as the box does not start before it: every coordinate must
 * be >= 0 at run time (a negative one is an illegal instruction, a sticky error that ends the CUDA
 * context). A coordinate whose known range is entirely negative (a negative literal, say) is
 * rejected here with `ArgumentError`; callers clamp or skip boxes that may start before the tensor.
 */
export function tmaStore(target: Target, options: TmaStoreOptions): Expr {
  requireIntrinsic(target, 'tma', 'cp.async.bulk.tensor (TMA store)');
  requireAddress('src', options.src);
  const { rank, exprs } = coordsOf(options.coords);
  exprs.forEach((e, i) => {
    const range = rangeOf(e);
    if (range !== null && range.max < 0n) {
      throw new ArgumentError(
        `coords[${i}]`,
        'must be >= 0 for a TMA store (a box starting before the tensor faults with an illegal instruction)',
        range.max,
      );
    }
  });
  return callHelper(storeHelper(rank), [mapAddress(options.map), options.src, ...exprs]);
}

/** `cp.async.bulk.commit_group` (sm_90). */
export function bulkCommitGroup(target: Target): Expr {
  requireIntrinsic(target, 'tma', 'cp.async.bulk.commit_group');
  return callHelper(commitHelper, []);
}

/**
 * `cp.async.bulk.wait_group[.read] N` (sm_90): at most `pending` (an immediate in [0, 255]) groups
 * still pending; `read: true` waits only until their shared-memory sources may be reused.
 */
export function bulkWaitGroup(target: Target, pending: number, options: { readonly read?: boolean } = {}): Expr {
  requireIntrinsic(target, 'tma', 'cp.async.bulk.wait_group');
  requireImmediate('pending', pending, 0, 255);
  return callHelper(options.read === true ? waitReadHelper : waitHelper, [], [String(pending)]);
}

/** `prefetch.tensormap` (sm_90) of a tensor map parameter (or a pointer to one). */
export function prefetchTensorMap(target: Target, map: Expr): Expr {
  requireIntrinsic(target, 'tma', 'prefetch.tensormap');
  return callHelper(prefetchHelper, [mapAddress(map)]);
}
