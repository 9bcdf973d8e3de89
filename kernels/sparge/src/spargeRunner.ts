// The operator-level runner of Sparge attention: from a problem (shapes, layouts, hyperparameters,
// pipeline, PV mode) to the block-map kernels and the sparse attention kernel that compute it,
// validated before anything is launched, then the launches on one stream. The block map is built
// with the attention kernel's tiles (blockQ = blockK = 128).
import {
  causalTopLeft,
  noMask,
  checkFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
  type FmhaFwdDType,
  type AttentionLayout,
} from '@tilekit/fmha';
import type { FmhaFwdRunnerBuffers, TensorMapEncoder } from '@tilekit/fmha-launch';
import { encodeTensorMapTiled, type Compiler, type Device, type DeviceBuffer } from '@tilekit/runtime';
import { SpargeBlockMapKernels, type PreparedSpargeBlockMap, type SpargeBlockMapProblem } from './blockMap/spargeBlockMapKernels.ts';
import { checkSpargePoolProblem } from './blockMap/spargePoolProblem.ts';
import { checkSpargeSelectConfig } from './blockMap/spargeSelectLauncher.ts';
import { SPARGE_FWD_CATALOG, SPARGE_FWD_TILE } from './attention/spargeFwdCatalog.ts';
import { type SpargeFwdInstance, type SpargePipeline, SPARGE_PIPELINES } from './attention/spargeFwdInstance.ts';
import {
  spargeFwdUnsupported,
  spargeMaxSeqlens,
  SpargeFwdKernel,
  type SpargeFwdLaunchProblem,
  type SpargePvModeName,
} from './attention/spargeFwdLauncher.ts';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { spargeBlockMapProblemOf } from './spargeBlockMapProblemOf.ts';
import { checkSpargeParams, type ResolvedSpargeParams, type SpargeParams } from './spargeHyperparameters.ts';
import { SPARGE_PV_MODES } from './spargeReference.ts';
import { spargeCausalBlockAllowed } from './spargeShape.ts';

/**
 * A Sparge attention problem: Q [b][h][sq][d], K/V [b][hk][sk][d] (layouts as the dense forward's:
 * bhsd or bshd, batch or group mode), d ∈ {64, 128}, the hyperparameters (`params`: topk or
 * cdfthreshd, simthreshd1, pvThreshold, smoothK, attentionSink, isCausal, int8), the attention
 * pipeline (`vsa` default, `jenga`) and the PV-skip vote (`none` default, `warp`, `block`).
 */
export interface SpargeProblem {
  readonly dtype: FmhaFwdDType;
  readonly batch: number;
  readonly nheadQ: number;
  readonly nheadK?: number;
  readonly hdimQ: number;
  readonly seqlenQ?: number;
  readonly seqlenK?: number;
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
  readonly inputLayout?: AttentionLayout;
  readonly outputLayout?: AttentionLayout;
  readonly lse?: boolean;
  readonly scale?: number;
  readonly params: SpargeParams;
  readonly pipeline?: SpargePipeline;
  readonly pvMode?: SpargePvModeName;
}

/** What runs a problem (no GPU needed to make it). */
export interface SpargePlan {
  /** The attention side (the dense forward's checked problem plus the sparse choices and the block grid). */
  readonly attention: SpargeFwdLaunchProblem;
  readonly params: ResolvedSpargeParams;
  readonly instance: SpargeFwdInstance;
  /** Blocks dense attention visits per (b, h) summed (the denominator of the achieved sparsity). */
  readonly denseBlocks: number;
}

/**
 * The block map's own rules on the shape (what the dense forward allows and it does not: batch-mode
 * sequences of at least one row, at most 4096 key blocks per row), checked while planning so that a
 * problem the block map rejects is rejected before any kernel is built.
 * @throws SpargeArgumentError naming the field.
 */
function checkSpargeBlockMapShape(b: SpargeBlockMapProblem, params: ResolvedSpargeParams): void {
  const { params: _params, ...shape } = b;
  const pool = checkSpargePoolProblem({
    ...shape,
    blockQ: params.blockQ,
    blockK: params.blockK,
    smoothK: params.smoothK,
    int8: params.int8,
    tailBlockRule: params.tailBlockRule,
  });
  const sequences =
    pool.mode === 'group' ? { seqstartQ: pool.seqstartQ!, seqstartK: pool.seqstartK! } : { seqlenQ: pool.seqlenQ, seqlenK: pool.seqlenK };
  checkSpargeSelectConfig({
    batch: pool.batch,
    nhead: pool.nhead,
    nheadK: pool.nheadK,
    headDim: pool.headDim,
    blockQ: pool.blockQ,
    blockK: pool.blockK,
    ...sequences,
    selection: params.selection,
    isCausal: params.isCausal,
    attentionSink: params.attentionSink,
  });
}

/**
 * Checks a problem and plans it: the attention problem (checkFmhaFwdProblem, mask = top-left causal
 * when params.isCausal), the hyperparameters (checkSpargeParams; blockQ/blockK, when given, must be
 * the kernels' 128), the pipeline and PV mode, the attention instance (and its predicates: jenga's
 * key-block limit, say), and the block map's rules on the shape (sequences of at least one row in
 * batch mode, at most 4096 key blocks).
 * @throws SpargeArgumentError / FmhaFwdArgumentError naming the argument and the rule.
 */
export function planSparge(problem: SpargeProblem): SpargePlan {
  if (typeof problem !== 'object' || problem === null) throw new SpargeArgumentError('problem', 'must be an object', problem);
  const params = checkSpargeParams(problem.params, { nhead: problem.nheadQ, headDim: problem.hdimQ });
  for (const key of ['blockQ', 'blockK'] as const) {
    const given = problem.params[key];
    const want = key === 'blockQ' ? SPARGE_FWD_TILE.tileM : SPARGE_FWD_TILE.tileN;
    if (given !== undefined && given !== want)
      throw new SpargeArgumentError(`params.${key}`, `must be ${want}: the block map uses the attention kernel's tile`, given);
  }
  const resolved: ResolvedSpargeParams = Object.freeze({ ...params, blockQ: SPARGE_FWD_TILE.tileM, blockK: SPARGE_FWD_TILE.tileN });
  if (params.int8 && params.smoothK && problem.lse === true) {
    // Q·(K − km) shifts every logit of a row by q·km: the softmax is unchanged, its normalizer is not.
    throw new SpargeArgumentError(
      'lse',
      'is not available with int8 Q·Kᵀ and smoothK (the int8 logits are relative to the ' +
        'smoothed K, so LSE would be off by q·km·scale); set smoothK false or lse false',
      true,
    );
  }
  const pipeline = problem.pipeline ?? 'vsa';
  if (!SPARGE_PIPELINES.includes(pipeline))
    throw new SpargeArgumentError('pipeline', `must be one of ${SPARGE_PIPELINES.join(', ')}`, pipeline);
  const pvMode = problem.pvMode ?? 'none';
  if (!SPARGE_PV_MODES.includes(pvMode)) throw new SpargeArgumentError('pvMode', `must be one of ${SPARGE_PV_MODES.join(', ')}`, pvMode);
  const { params: _p, pipeline: _pl, pvMode: _pv, ...shape } = problem;
  const checked: CheckedFmhaFwdProblem = checkFmhaFwdProblem({ ...shape, mask: params.isCausal ? causalTopLeft : noMask });
  const { maxQ, maxK } = spargeMaxSeqlens(checked);
  const qBlocks = Math.max(1, Math.ceil(maxQ / resolved.blockQ));
  const kBlocks = Math.max(1, Math.ceil(maxK / resolved.blockK));
  const attention: SpargeFwdLaunchProblem = { ...checked, pipeline, pvMode, qBlocks, kBlocks };
  const instance = SPARGE_FWD_CATALOG.find(
    (i) =>
      i.policy.pipeline === pipeline &&
      i.policy.dtype === checked.dtype &&
      i.policy.headDim === checked.hdimQ &&
      i.policy.mask === (params.isCausal ? 'window' : 'none') &&
      (i.policy.pvGate !== undefined) === (pvMode !== 'none') &&
      (i.policy.qkOperand?.tag === 'int8') === params.int8,
  );
  if (instance === undefined)
    throw new SpargeArgumentError(
      'problem',
      'has no sparse attention instance (dtype fp16/bf16, d 64/128)',
      `${checked.dtype} d${checked.hdimQ}`,
    );
  const reasons = spargeFwdUnsupported(instance, attention);
  if (reasons.length > 0)
    throw new SpargeArgumentError(
      'problem',
      `${instance.name} cannot run it: ${reasons.join('; ')}`,
      `${checked.dtype} d${checked.hdimQ} ${pipeline}`,
    );
  checkSpargeBlockMapShape(spargeBlockMapProblemOf(attention, problem.params, resolved), resolved);
  let denseBlocks = 0;
  for (let b = 0; b < checked.batch; b++) {
    const sq = checked.mode === 'batch' ? checked.seqlenQ : checked.seqstartQ[b + 1]! - checked.seqstartQ[b]!;
    const sk = checked.mode === 'batch' ? checked.seqlenK : checked.seqlensK[b]!;
    const qb = Math.ceil(sq / resolved.blockQ);
    const kb = Math.ceil(sk / resolved.blockK);
    for (let i = 0; i < qb; i++)
      for (let j = 0; j < kb; j++)
        if (!params.isCausal || spargeCausalBlockAllowed(i, j, resolved.blockQ, resolved.blockK, sq)) denseBlocks++;
  }
  return Object.freeze({ attention, params: resolved, instance, denseBlocks: denseBlocks * checked.nheadQ });
}

/** Device memory of one run: the dense forward runner's (Q, K, V, O, LSE when asked, group-mode seqstarts, the stream) without per-batch key counts. */
export type SpargeBuffers = Omit<FmhaFwdRunnerBuffers, 'seqlenK'>;

/** A prepared run: enqueue the stages (together or apart, for timing), read what they produced. */
export interface PreparedSparge {
  readonly plan: SpargePlan;
  /** The block-map prediction (K mean, pooling, selection). */
  launchBlockMap(): void;
  /** The sparse attention (reads the map the last `launchBlockMap` wrote). */
  launchAttention(): void;
  /** Both, in order. */
  launch(): void;
  /** After a synchronize: the predicted one-hot map, the LUT and valid counts (host copies). */
  readBlockMap(): { readonly map: Uint8Array; readonly lut: Int32Array; readonly validBlockNum: Int32Array };
  /** After a synchronize: 1 − visited blocks / blocks dense attention visits. */
  achievedSparsity(): number;
  /** After a synchronize: P·V tiles computed and skipped, summed over the launches since `prepare` (warpgroup granularity). */
  pvStats(): { readonly computed: number; readonly skipped: number };
  dispose(): void;
}

/** How the runner gets its kernels (default: built on first use and kept). */
export interface SpargeRunnerOptions {
  readonly device: Device;
  readonly compiler: Compiler;
  /** TMA descriptor encoder (default: the driver's, on `device`). */
  readonly encode?: TensorMapEncoder;
}

/**
 * Sparge attention on one device: `prepare(problem, buffers)` plans, builds what it needs (the
 * block-map kernels of the problem's head dim, the attention instance), allocates the block map, LUT,
 * counters and per-head PV thresholds, validates every launch, and returns closures that only enqueue.
 */
export class SpargeRunner {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly #encode: TensorMapEncoder;
  readonly #blockMaps = new Map<number, Promise<SpargeBlockMapKernels>>();
  readonly #attention = new Map<string, Promise<SpargeFwdKernel>>();

  constructor(options: SpargeRunnerOptions) {
    this.device = options.device;
    this.compiler = options.compiler;
    this.#encode = options.encode ?? ((o) => encodeTensorMapTiled(options.device, o));
  }

  #blockMapKernels(headDim: number): Promise<SpargeBlockMapKernels> {
    let k = this.#blockMaps.get(headDim);
    if (k === undefined) {
      k = SpargeBlockMapKernels.build({ device: this.device, compiler: this.compiler, headDims: [headDim] });
      this.#blockMaps.set(headDim, k);
    }
    return k;
  }

  #attentionKernel(instance: SpargeFwdInstance): Promise<SpargeFwdKernel> {
    let k = this.#attention.get(instance.name);
    if (k === undefined) {
      k = SpargeFwdKernel.build(instance, { device: this.device, compiler: this.compiler });
      this.#attention.set(instance.name, k);
    }
    return k;
  }

  /** Plans `problem`, builds its kernels, allocates its workspace and validates both stages' launches. */
  async prepare(problem: SpargeProblem, buffers: SpargeBuffers): Promise<PreparedSparge> {
    const plan = planSparge(problem);
    const p = plan.attention;
    const [blockMaps, attention] = await Promise.all([this.#blockMapKernels(p.hdimQ), this.#attentionKernel(plan.instance)]);
    const cells = p.batch * p.nheadQ * p.qBlocks * p.kBlocks;
    const rows = p.batch * p.nheadQ * p.qBlocks;
    const owned: DeviceBuffer[] = [];
    const alloc = (bytes: number): DeviceBuffer => {
      const b = this.device.alloc(Math.max(1, bytes));
      owned.push(b);
      return b;
    };
    let blockMapRun: PreparedSpargeBlockMap | undefined;
    try {
      const blockMap = alloc(cells);
      const lut = alloc(4 * cells);
      const validBlockNum = alloc(4 * rows);
      const visited = alloc(4 * p.batch * p.nheadQ);
      const pvStats = alloc(16).fill(0);
      const pvThreshold = this.device.upload(Float32Array.from(plan.params.pvThreshold));
      owned.push(pvThreshold);
      const seqstarts = p.mode === 'group' ? { seqstartQ: buffers.seqstartQ!, seqstartK: buffers.seqstartK! } : {};
      const stream = buffers.stream === undefined ? {} : { stream: buffers.stream };
      blockMapRun = blockMaps.prepare(spargeBlockMapProblemOf(p, problem.params, plan.params), {
        q: buffers.q,
        k: buffers.k,
        ...seqstarts,
        blockMap,
        lut,
        validBlockNum,
        visited,
        ...stream,
      });
      const inter = blockMapRun.intermediates;
      const attn = attention.prepare(
        p,
        {
          q: buffers.q,
          k: buffers.k,
          v: buffers.v,
          o: buffers.o,
          ...(buffers.lse ? { lse: buffers.lse } : {}),
          ...seqstarts,
          lut,
          validBlockNum,
          blockMap,
          pvThreshold,
          pvStats,
          ...(plan.params.int8 ? { q8: inter.q8!, k8: inter.k8!, qScale: inter.qScale!, kScale: inter.kScale! } : {}),
          ...stream,
        },
        this.#encode,
      );
      const mapRun = blockMapRun;
      return {
        plan,
        launchBlockMap: () => mapRun.launch(),
        launchAttention: () => attn.launch(),
        launch: () => {
          mapRun.launch();
          attn.launch();
        },
        readBlockMap: () => ({
          map: new Uint8Array(blockMap.copyToHost().buffer),
          lut: new Int32Array(lut.copyToHost().buffer),
          validBlockNum: new Int32Array(validBlockNum.copyToHost().buffer),
        }),
        achievedSparsity: () => {
          const counts = new Int32Array(visited.copyToHost().buffer);
          return 1 - counts.reduce((a, b) => a + b, 0) / plan.denseBlocks;
        },
        pvStats: () => {
          const s = new BigUint64Array(pvStats.copyToHost().buffer);
          return { computed: Number(s[0]), skipped: Number(s[1]) };
        },
        dispose: () => {
          mapRun.dispose();
          for (const b of owned) b.dispose();
        },
      };
    } catch (error) {
      blockMapRun?.dispose();
      for (const b of owned) b.dispose();
      throw error;
    }
  }
}
