// The launcher of Sparge's block-map stage part A: validates a pooling problem and its device
// buffers (SpargeArgumentError / ArgumentError naming the argument), packs the K-mean partial and
// finalize passes and the Q and K pooling launches, and enqueues them in that order on a stream.
import type { PackedArguments } from '@tilekit/codegen';
import { checkDeviceRange, LoadedKernel, type Compiler, type Device, type DeviceRange, type Stream } from '@tilekit/runtime';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import type { SpargeKeyMeanFinalizeInstance } from './spargeKeyMeanFinalize.ts';
import type { SpargeKeyMeanPartialInstance } from './spargeKeyMeanPartial.ts';
import {
  SPARGE_KEY_MEAN_FINALIZE_CATALOG,
  SPARGE_KEY_MEAN_PARTIAL_CATALOG,
  SPARGE_POOL_CATALOG,
  SPARGE_POOL_COMPILE_FLAGS,
  type SpargePoolAnyInstance,
} from './spargePoolCatalog.ts';
import type { SpargePoolInstance } from './spargePoolInstance.ts';
import type { SpargeRowKernelLaunch } from './spargePoolPolicy.ts';
import {
  checkSpargePoolProblem,
  spargePoolOutputBytes,
  spargeTensorSpan,
  type CheckedSpargePoolProblem,
  type SpargePoolProblem,
} from './spargePoolProblem.ts';

/** What the pooling stage writes (sizes from `spargePoolOutputBytes`) and its K-mean workspace: the selection and attention stages read them. */
export interface SpargePoolOutputs {
  readonly pooledQ: DeviceRange;
  readonly simQ: DeviceRange;
  readonly pooledK: DeviceRange;
  readonly simK: DeviceRange;
  readonly km: DeviceRange;
  /** The K-mean partial sums (`kmPartial` bytes); needed when smoothK. */
  readonly kmPartial?: DeviceRange;
  /** int8 outputs: required when the problem has int8. */
  readonly q8?: DeviceRange;
  readonly k8?: DeviceRange;
  readonly qScale?: DeviceRange;
  readonly kScale?: DeviceRange;
}

/** Device memory of the pooling stage: inputs, outputs, workspace, stream. */
export interface SpargePoolBuffers extends SpargePoolOutputs {
  /** Q and K with the problem's element strides (16-byte aligned). */
  readonly q: DeviceRange;
  readonly k: DeviceRange;
  /** Group mode: int32, batch + 1 entries each. */
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
  readonly stream?: Stream;
}

/** The instances one problem launches. */
export interface SpargePoolInstanceSet {
  readonly poolQ: SpargePoolInstance;
  readonly poolK: SpargePoolInstance;
  readonly keyMeanPartial: SpargeKeyMeanPartialInstance;
  readonly keyMeanFinalize: SpargeKeyMeanFinalizeInstance;
}

/** One packed launch. */
export interface SpargePoolPackedLaunch {
  readonly instance: SpargePoolAnyInstance;
  readonly launch: SpargeRowKernelLaunch;
  readonly args: PackedArguments;
}

/** The instances of `catalog`-like lists that run `p` (SpargeArgumentError naming `problem` when one is missing). */
export function spargePoolInstancesFor(
  p: CheckedSpargePoolProblem,
  pools: readonly SpargePoolInstance[] = SPARGE_POOL_CATALOG,
  partials: readonly SpargeKeyMeanPartialInstance[] = SPARGE_KEY_MEAN_PARTIAL_CATALOG,
  finals: readonly SpargeKeyMeanFinalizeInstance[] = SPARGE_KEY_MEAN_FINALIZE_CATALOG,
): SpargePoolInstanceSet {
  const pool = (rows: number): SpargePoolInstance => {
    const i = pools.find((x) => x.policy.dtype === p.dtype && x.policy.headDim === p.headDim && x.policy.blockRows === rows);
    if (i === undefined)
      throw new SpargeArgumentError(
        'problem',
        `no pooling instance for ${p.dtype} d${p.headDim} block ${rows} was built`,
        pools.map((x) => x.name),
      );
    return i;
  };
  const keyMeanPartial = partials.find((x) => x.policy.dtype === p.dtype && x.policy.headDim === p.headDim);
  if (keyMeanPartial === undefined)
    throw new SpargeArgumentError(
      'problem',
      `no K-mean instance for ${p.dtype} d${p.headDim} was built`,
      partials.map((x) => x.name),
    );
  const keyMeanFinalize = finals.find((x) => x.policy.headDim === p.headDim);
  if (keyMeanFinalize === undefined)
    throw new SpargeArgumentError(
      'problem',
      `no K-mean finalize instance for d${p.headDim} was built`,
      finals.map((x) => x.name),
    );
  return { poolQ: pool(p.blockQ), poolK: pool(p.blockK), keyMeanPartial, keyMeanFinalize };
}

/**
 * Validates `buffers` against `p` and packs the launches, in order: K-mean partial sums (only when
 * smoothK), K-mean finalize (writes km; zeros without smoothK), pooling of K (minus km when smoothK),
 * pooling of Q. Throws ArgumentError naming the buffer (too small, misaligned, missing: `kmPartial`
 * with smoothK, `q8`/`k8`/`qScale`/`kScale` with int8, `seqstartQ`/`seqstartK` in group mode).
 * Postcondition (unit-tested): every launch's grid covers the problem's blocks and chunks.
 */
export function planSpargePoolLaunches(
  problem: SpargePoolProblem | CheckedSpargePoolProblem,
  buffers: SpargePoolBuffers,
  set: SpargePoolInstanceSet,
): SpargePoolPackedLaunch[] {
  const p = 'kmChunkRows' in problem ? problem : checkSpargePoolProblem(problem);
  if (typeof buffers !== 'object' || buffers === null)
    throw new SpargeArgumentError('buffers', 'must be an object of device ranges', buffers);
  const sizes = spargePoolOutputBytes(p);
  const e = 2;
  const d = p.headDim;
  const group = p.mode === 'group';
  const q = checkDeviceRange('q', buffers.q, spargeTensorSpan(p.qStrides, p.batches, p.nhead, p.rowsQ, d) * e, 16);
  const k = checkDeviceRange('k', buffers.k, spargeTensorSpan(p.kStrides, p.batches, p.nheadK, p.rowsK, d) * e, 16);
  const seqstartQ = group ? checkDeviceRange('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4).ptr : 0n;
  const seqstartK = group ? checkDeviceRange('seqstartK', buffers.seqstartK, 4 * (p.batch + 1), 4).ptr : 0n;
  const pooledQ = checkDeviceRange('pooledQ', buffers.pooledQ, sizes.pooledQ, 4);
  const simQ = checkDeviceRange('simQ', buffers.simQ, sizes.simQ, 4);
  const pooledK = checkDeviceRange('pooledK', buffers.pooledK, sizes.pooledK, 4);
  const simK = checkDeviceRange('simK', buffers.simK, sizes.simK, 4);
  const km = checkDeviceRange('km', buffers.km, sizes.km, 4);
  const kmPartial = p.smoothK ? checkDeviceRange('kmPartial', buffers.kmPartial, sizes.kmPartial, 4).ptr : 0n;
  const q8 = p.int8 ? checkDeviceRange('q8', buffers.q8, sizes.q8, 8).ptr : 0n;
  const k8 = p.int8 ? checkDeviceRange('k8', buffers.k8, sizes.k8, 8).ptr : 0n;
  const qScale = p.int8 ? checkDeviceRange('qScale', buffers.qScale, sizes.qScale, 4).ptr : 0n;
  const kScale = p.int8 ? checkDeviceRange('kScale', buffers.kScale, sizes.kScale, 4).ptr : 0n;
  const out: SpargePoolPackedLaunch[] = [];
  const chunkArgs = { heads: p.nheadK, chunks_max: p.kmChunksMax, chunk_rows: p.kmChunkRows, seqlen: p.seqlenK, seqstart: seqstartK };
  if (p.smoothK) {
    const i = set.keyMeanPartial;
    out.push({
      instance: i,
      launch: i.launch(p.batch, p.nheadK, p.kmChunksMax),
      args: i.signature.pack({
        k: k.ptr,
        k_stride_row: p.kStrides.row,
        k_stride_head: p.kStrides.head,
        k_stride_batch: p.kStrides.batch,
        partial: kmPartial,
        ...chunkArgs,
      }),
    });
  }
  const f = set.keyMeanFinalize;
  // Without smoothing the finalize pass reads nothing and writes km = 0; it still needs a non-null pointer.
  out.push({
    instance: f,
    launch: f.launch(p.batch, p.nheadK),
    args: f.signature.pack({ partial: p.smoothK ? kmPartial : km.ptr, km: km.ptr, smooth: p.smoothK ? 1 : 0, ...chunkArgs }),
  });
  const tailNan = p.tailBlockRule === 'upstreamFix' ? 1 : 0;
  const pool = (
    i: SpargePoolInstance,
    x: DeviceRange,
    s: CheckedSpargePoolProblem['qStrides'],
    heads: number,
    blocks: number,
    rows: number,
    seqlen: number,
    seqstart: bigint,
    mean: bigint,
    pooled: DeviceRange,
    sim: DeviceRange,
    x8: bigint,
    scale: bigint,
  ): void => {
    if (blocks === 0) return;
    out.push({
      instance: i,
      launch: i.launch(p.batch, heads, blocks),
      args: i.signature.pack({
        x: x.ptr,
        x_stride_row: s.row,
        x_stride_head: s.head,
        x_stride_batch: s.batch,
        mean,
        pooled: pooled.ptr,
        sim: sim.ptr,
        x8,
        scale,
        heads,
        blocks_max: blocks,
        rows_total: rows,
        seqlen,
        seqstart,
        tail_nan: tailNan,
      }),
    });
  };
  pool(set.poolK, k, p.kStrides, p.nheadK, p.kBlocksMax, p.rowsK, p.seqlenK, seqstartK, p.smoothK ? km.ptr : 0n, pooledK, simK, k8, kScale);
  pool(set.poolQ, q, p.qStrides, p.nhead, p.qBlocksMax, p.rowsQ, p.seqlenQ, seqstartQ, 0n, pooledQ, simQ, q8, qScale);
  return out;
}

/** One block-map row kernel compiled and loaded on a device. */
export class SpargeRowKernel extends LoadedKernel<SpargePoolAnyInstance> {
  /** Compiles (SPARGE_POOL_COMPILE_FLAGS) and loads `instance` with the runtime's arch and parameter-layout checks. */
  static async build(
    instance: SpargePoolAnyInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<SpargeRowKernel> {
    return new SpargeRowKernel(
      instance,
      await LoadedKernel.loadWith(instance, { ...options, flags: SPARGE_POOL_COMPILE_FLAGS }),
      options.device,
    );
  }

  /** A closure that only enqueues the packed launch on `stream`. */
  enqueuer(l: SpargePoolPackedLaunch, stream: Stream | undefined): () => void {
    return this.enqueue(l.launch, l.args, stream);
  }
}

/** Which catalog instances `SpargePoolKernels.build` loads (default: all). */
export interface SpargePoolKernelsOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly dtypes?: readonly string[];
  readonly headDims?: readonly number[];
  readonly blockRows?: readonly number[];
}

/**
 * Sparge's block-map part A on a device: `build` compiles and loads the catalog's pooling and K-mean
 * instances (optionally only some dtypes / head dims / block rows); `prepare(problem, buffers)`
 * validates (see `planSpargePoolLaunches`) and returns `launch()`, which enqueues K mean, K pooling
 * and Q pooling on `buffers.stream`. Postcondition (GPU spec `spargePool.gpu.spec.ts`): the outputs
 * equal the CPU references (`spargeKeyMean`, `spargePoolBlocks`, `spargeQuantizeBlocksInt8`).
 */
export class SpargePoolKernels {
  readonly #kernels: Map<string, SpargeRowKernel>;

  private constructor(kernels: Map<string, SpargeRowKernel>) {
    this.#kernels = kernels;
  }

  /** Compiles and loads the selected instances. */
  static async build(options: SpargePoolKernelsOptions): Promise<SpargePoolKernels> {
    const keep = (dtype: string | undefined, headDim: number, rows: number | undefined): boolean =>
      (dtype === undefined || options.dtypes === undefined || options.dtypes.includes(dtype)) &&
      (options.headDims === undefined || options.headDims.includes(headDim)) &&
      (rows === undefined || options.blockRows === undefined || options.blockRows.includes(rows));
    const chosen: SpargePoolAnyInstance[] = [
      ...SPARGE_POOL_CATALOG.filter((i) => keep(i.policy.dtype, i.policy.headDim, i.policy.blockRows)),
      ...SPARGE_KEY_MEAN_PARTIAL_CATALOG.filter((i) => keep(i.policy.dtype, i.policy.headDim, undefined)),
      ...SPARGE_KEY_MEAN_FINALIZE_CATALOG.filter((i) => keep(undefined, i.policy.headDim, undefined)),
    ];
    const built = await Promise.all(chosen.map((i) => SpargeRowKernel.build(i, options)));
    return new SpargePoolKernels(new Map(built.map((k) => [k.instance.name, k])));
  }

  /** The loaded instances, by name. */
  get instances(): readonly SpargePoolAnyInstance[] {
    return [...this.#kernels.values()].map((k) => k.instance);
  }

  /** Validates once; `launch` only enqueues (K-mean partial, finalize, K pooling, Q pooling). */
  prepare(
    problem: SpargePoolProblem | CheckedSpargePoolProblem,
    buffers: SpargePoolBuffers,
  ): { readonly problem: CheckedSpargePoolProblem; readonly launches: readonly SpargePoolPackedLaunch[]; launch(): void } {
    const p = 'kmChunkRows' in problem ? problem : checkSpargePoolProblem(problem);
    const loaded = this.instances;
    const set = spargePoolInstancesFor(
      p,
      loaded.filter((i): i is SpargePoolInstance => i.key.family === 'sparge_pool'),
      loaded.filter((i): i is SpargeKeyMeanPartialInstance => i.key.family === 'sparge_key_mean_partial'),
      loaded.filter((i): i is SpargeKeyMeanFinalizeInstance => i.key.family === 'sparge_key_mean_finalize'),
    );
    const launches = planSpargePoolLaunches(p, buffers, set);
    const steps = launches.map((l) => this.#kernels.get(l.instance.name)!.enqueuer(l, buffers.stream));
    return { problem: p, launches, launch: () => steps.forEach((s) => s()) };
  }

  /** Unloads every module (queued launches must have finished). */
  dispose(): void {
    for (const k of this.#kernels.values()) k.dispose();
  }
}
