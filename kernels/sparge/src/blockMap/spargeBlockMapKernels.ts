// Sparge's whole block-map prediction on a device: part A (K mean, pooling, self-similarity, int8)
// from SpargePoolKernels, then the selection kernel, on one stream. Owns (or accepts) the
// intermediates and the per-head hyperparameter arrays; validates everything before any launch.
import { ArgumentError } from '@tilekit/numeric';
import type { Compiler, Device, DeviceBuffer, DeviceRange, Stream } from '@tilekit/runtime';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { checkSpargeParams, type ResolvedSpargeParams, type SpargeParams } from '../spargeHyperparameters.ts';
import {
  checkSpargePoolProblem,
  spargePoolOutputBytes,
  type CheckedSpargePoolProblem,
  type SpargePoolProblem,
} from './spargePoolProblem.ts';
import { SpargePoolKernels, type SpargePoolOutputs } from './spargePoolKernels.ts';
import { SPARGE_SELECT_CATALOG } from './spargeSelectCatalog.ts';
import {
  checkSpargeSelectConfig,
  packSpargeSelect,
  spargeSelectBufferBytes,
  SpargeSelectKernel,
  type CheckedSpargeSelectConfig,
} from './spargeSelectLauncher.ts';

/**
 * The block-map problem: Q/K shapes, strides and mode as part A's SpargePoolProblem (its blockQ,
 * blockK, smoothK, int8 and tailBlockRule come from `params`), plus the Sparge hyperparameters.
 */
export interface SpargeBlockMapProblem extends Omit<SpargePoolProblem, 'blockQ' | 'blockK' | 'smoothK' | 'int8' | 'tailBlockRule'> {
  readonly params: SpargeParams;
}

/** The intermediates between the stages: the pooling stage's outputs; allocated by `prepare` when absent. */
export type SpargeBlockMapIntermediates = SpargePoolOutputs;

/**
 * Device memory of one block-map prediction: Q, K (and seqstarts in group mode), the outputs
 * blockMap u8 / lut i32 [b][h][qBlocksMax][kBlocksMax], validBlockNum i32 [b][h][qBlocksMax], the
 * optional visited i32 [b][h] (zeroed on the stream each launch), optional intermediates, the stream.
 */
export interface SpargeBlockMapBuffers {
  readonly q: DeviceRange;
  readonly k: DeviceRange;
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
  readonly blockMap: DeviceRange;
  readonly lut: DeviceRange;
  readonly validBlockNum: DeviceRange;
  readonly visited?: DeviceBuffer;
  readonly intermediates?: SpargeBlockMapIntermediates;
  readonly stream?: Stream;
}

/** A validated prediction: `launch()` only enqueues; `dispose()` frees what `prepare` allocated. */
export interface PreparedSpargeBlockMap {
  readonly pool: CheckedSpargePoolProblem;
  readonly select: CheckedSpargeSelectConfig;
  readonly params: ResolvedSpargeParams;
  readonly intermediates: SpargeBlockMapIntermediates;
  launch(): void;
  dispose(): void;
}

/** Which instances `SpargeBlockMapKernels.build` loads (default: all). */
export interface SpargeBlockMapKernelsOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly dtypes?: readonly string[];
  readonly headDims?: readonly number[];
}

/**
 * The GPU block map (SpargeAttn's stage 1, as spargeBlockMapReference.ts states it): `build` loads
 * part A's kernels and the selection catalog; `prepare(problem, buffers)` checks the hyperparameters (checkSpargeParams: exactly one of
 * topk/cdfthreshd, ranges, per-head lengths, head dim), the shapes and every buffer, uploads the
 * per-head simthreshd1 and topk/τ arrays (float64) and allocates missing intermediates; `launch()`
 * enqueues K mean → K pooling → Q pooling → selection on `buffers.stream`. Postcondition (GPU spec
 * spargeBlockMap.gpu.spec.ts): the map equals spargeBlockMapReference's except in rows within
 * rounding of a selection or similarity threshold.
 */
export class SpargeBlockMapKernels {
  readonly device: Device;
  readonly pool: SpargePoolKernels;
  readonly #select: Map<string, SpargeSelectKernel>;

  private constructor(device: Device, pool: SpargePoolKernels, select: Map<string, SpargeSelectKernel>) {
    this.device = device;
    this.pool = pool;
    this.#select = select;
  }

  /** Compiles and loads part A's instances and the selection instances of the chosen head dims. */
  static async build(options: SpargeBlockMapKernelsOptions): Promise<SpargeBlockMapKernels> {
    const pool = await SpargePoolKernels.build({
      device: options.device,
      compiler: options.compiler,
      ...(options.dtypes ? { dtypes: options.dtypes } : {}),
      ...(options.headDims ? { headDims: options.headDims } : {}),
    });
    const chosen = SPARGE_SELECT_CATALOG.filter((i) => options.headDims === undefined || options.headDims.includes(i.policy.headDim));
    const built = await Promise.all(chosen.map((i) => SpargeSelectKernel.build(i, options)));
    return new SpargeBlockMapKernels(options.device, pool, new Map(built.map((k) => [k.instance.name, k])));
  }

  /**
   * Validates and prepares one prediction (see the class comment).
   * @throws SpargeArgumentError / ArgumentError naming the argument, before anything is enqueued.
   */
  prepare(problem: SpargeBlockMapProblem, buffers: SpargeBlockMapBuffers): PreparedSpargeBlockMap {
    if (typeof problem !== 'object' || problem === null) throw new SpargeArgumentError('problem', 'must be an object', problem);
    if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
    const nhead = problem.nhead;
    const params = checkSpargeParams(problem.params, { nhead, headDim: problem.headDim });
    const { params: _params, ...shape } = problem;
    const pool = checkSpargePoolProblem({
      ...shape,
      blockQ: params.blockQ,
      blockK: params.blockK,
      smoothK: params.smoothK,
      int8: params.int8,
      tailBlockRule: params.tailBlockRule,
    });
    const group = pool.mode === 'group';
    const select = checkSpargeSelectConfig({
      batch: pool.batch,
      nhead: pool.nhead,
      nheadK: pool.nheadK,
      headDim: pool.headDim,
      blockQ: params.blockQ,
      blockK: params.blockK,
      ...(group ? { seqstartQ: pool.seqstartQ!, seqstartK: pool.seqstartK! } : { seqlenQ: pool.seqlenQ, seqlenK: pool.seqlenK }),
      selection: params.selection,
      isCausal: params.isCausal,
      attentionSink: params.attentionSink,
    });
    const owned: DeviceBuffer[] = [];
    const alloc = (bytes: number): DeviceBuffer => {
      const b = this.device.alloc(Math.max(1, bytes));
      owned.push(b);
      return b;
    };
    try {
      const sizes = spargePoolOutputBytes(pool);
      const intermediates: SpargeBlockMapIntermediates = buffers.intermediates ?? {
        pooledQ: alloc(sizes.pooledQ),
        simQ: alloc(sizes.simQ),
        pooledK: alloc(sizes.pooledK),
        simK: alloc(sizes.simK),
        km: alloc(sizes.km),
        ...(pool.smoothK ? { kmPartial: alloc(sizes.kmPartial) } : {}),
        ...(pool.int8 ? { q8: alloc(sizes.q8), k8: alloc(sizes.k8), qScale: alloc(sizes.qScale), kScale: alloc(sizes.kScale) } : {}),
      };
      const simthreshd1 = this.device.upload(Float64Array.from(params.simthreshd1));
      owned.push(simthreshd1);
      const selectionValue = this.device.upload(Float64Array.from(params.selectionValue));
      owned.push(selectionValue);
      const seqstarts = group ? { seqstartQ: buffers.seqstartQ!, seqstartK: buffers.seqstartK! } : {};
      const poolRun = this.pool.prepare(pool, {
        q: buffers.q,
        k: buffers.k,
        ...seqstarts,
        ...intermediates,
        ...(buffers.stream ? { stream: buffers.stream } : {}),
      });
      const packed = packSpargeSelect(select, {
        pooledQ: intermediates.pooledQ,
        simQ: intermediates.simQ,
        pooledK: intermediates.pooledK,
        simK: intermediates.simK,
        simthreshd1,
        selectionValue,
        blockMap: buffers.blockMap,
        lut: buffers.lut,
        validBlockNum: buffers.validBlockNum,
        ...(buffers.visited ? { visited: buffers.visited } : {}),
        ...seqstarts,
      });
      const kernel = this.#select.get(packed.instance.name);
      if (kernel === undefined)
        throw new SpargeArgumentError(
          'headDim',
          `has no loaded selection instance (${packed.instance.name}); build with this head dim`,
          pool.headDim,
        );
      const visitedBytes = spargeSelectBufferBytes(select).visited;
      const stream = buffers.stream;
      return {
        pool,
        select,
        params,
        intermediates,
        launch: () => {
          poolRun.launch();
          buffers.visited?.fill(0, { bytes: visitedBytes, ...(stream ? { stream } : {}) });
          kernel.launch(packed, stream);
        },
        dispose: () => {
          for (const b of owned) b.dispose();
        },
      };
    } catch (error) {
      for (const b of owned) b.dispose();
      throw error;
    }
  }

  /** Unloads every module (queued launches must have finished). */
  dispose(): void {
    this.pool.dispose();
    for (const k of this.#select.values()) k.dispose();
  }
}
