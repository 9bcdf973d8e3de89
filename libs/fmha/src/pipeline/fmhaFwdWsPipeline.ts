import {
  checkSetMaxNRegBudget,
  add,
  cast,
  declareAlignedDynamicShared,
  ge,
  int32,
  pointer,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockGemmPolicyError, WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import { DenseKeyTileWalk, type FmhaFwdKeyTileWalk } from './fmhaFwdKeyTiles.ts';
import type { FmhaFwdPvGate } from './fmhaFwdPvGate.ts';
import { emitFmhaFwdWsConsumer } from './fmhaFwdWsConsumer.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import { emitFmhaFwdWsProducer } from './fmhaFwdWsProducer.ts';
import { FmhaFwdWsRing } from './fmhaFwdWsRing.ts';
import type { FmhaFwdQkOperand } from './fmhaFwdQkOperand.ts';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';
import type { FmhaScoreAt } from '../scoreMod/fmhaScoreModifier.ts';
import type { FmhaFwdConsumerSchedule } from './fmhaFwdConsumerSchedule.ts';
import type { FmhaFwdOutputSplit } from './fmhaFwdOutputSplit.ts';
import { FMHA_FWD_RESIDENT_QK, type FmhaFwdQkSource } from './fmhaFwdQkSource.ts';

/** Policy of {@link FmhaFwdWsPipeline}: tile shape, ring depth and register split. */
export interface FmhaFwdWsPolicy {
  /** Q/K/V/O element type (fp32 accumulation and softmax). */
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K (the first GEMM's K): 32 … 256, a multiple of 16 (up to the `qkSource`'s maximum). */
  readonly headDim: number;
  /**
   * Head dim of V and O (the second GEMM's N): a multiple of 16 in [16, 256]; with `outputSplit`, a
   * multiple of 64 up to 256 per slice, the last slice padded to whole slabs (d_v 320 = 2 × 192).
   */
  readonly headDimV: number;
  /** Query rows per block: 64 per consumer warpgroup (64, 128 or 192). */
  readonly tileM: number;
  /** Key rows per iteration: a multiple of 16 in [16, 256]. */
  readonly tileN: number;
  /** K/V shared-memory stages: 2, 3 or 4. */
  readonly stages: number;
  /** Register budget of the producer warpgroup after `setmaxnreg.dec`. */
  readonly producerRegisters: number;
  /** Register budget of each consumer warpgroup after `setmaxnreg.inc`. */
  readonly consumerRegisters: number;
  /**
   * A P·V gate (Sparge's PV-skip vote, `FmhaFwdPvSkipGate`; default none): per visited key tile,
   * groups of rows may skip P·V; its runtime values come with the kernel's arguments ({@link FmhaFwdWsArgs.pvGate}).
   */
  readonly pvGate?: FmhaFwdPvGate;
  /** The key-tile walk's shared memory: the walk the kernel passes, or any value with its `sharedBytes` (default 0). */
  readonly keyTileWalk?: Pick<FmhaFwdKeyTileWalk, 'sharedBytes'>;
  /**
   * A Q·Kᵀ operand transform (int8 Q and K, `FmhaFwdInt8QkOperand`); its dequantization scales come
   * with the kernel's arguments ({@link FmhaFwdWsArgs.int8Scales}). Default: Q and K have `dtype`.
   */
  readonly qkOperand?: FmhaFwdQkOperand;
  /**
   * The consumers' schedule over the key tiles (default `FMHA_FWD_SEQUENTIAL_SCHEDULE`, one tile at a
   * time): `FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE` (P·V of tile i − 1 runs during tile i's softmax) or
   * `FMHA_FWD_PINGPONG_SCHEDULE` (that, with the two consumer warpgroups taking turns to issue).
   */
  readonly schedule?: FmhaFwdConsumerSchedule;
  /**
   * How Q and K reach the Q·Kᵀ wgmmas (default `FMHA_FWD_RESIDENT_QK`: Q whole in shared memory, K
   * in whole tiles; `FmhaFwdChunkedQkSource` streams both in head-dim chunks).
   */
  readonly qkSource?: FmhaFwdQkSource;
  /** O's columns split across groups of consumer warpgroups (`FmhaFwdRecomputeSOutputSplit`); default: each warpgroup holds all of d_v. */
  readonly outputSplit?: FmhaFwdOutputSplit;
}

/** The per-tile dequantization scales of the int8 Q·Kᵀ (policy `qkOperand`). */
export interface FmhaFwdInt8Scales {
  /** `float` scale of this block's query tile. */
  readonly q: Expr;
  /** `float` scale of the key tile whose first row is `row` (emitted in the consumer loop). */
  k(l: BlockBuilder, row: Expr): Expr;
}

/**
 * The runtime side of the PV skip. `mode` (`int`): 0 none (never skip), 1 warp (each warp's 16 rows
 * vote; a warp that votes skip zeroes its P and adds nothing to l; its warpgroup issues the P·V
 * wgmma unless all four warps skip), 2 block (all query rows of the block vote together, upstream's
 * kPerBlock). `threshold` (`float`, log2 units; +∞ never skips). `stats` (nullable `unsigned
 * long long*`): when set, each consumer warpgroup adds its computed and skipped P·V tiles to
 * stats[0] and stats[1].
 */
export interface FmhaFwdPvSkipArgs {
  readonly mode: Expr;
  readonly threshold: Expr;
  readonly stats: Expr;
}

/** What the kernel hands the pipeline: its values as expressions. */
export interface FmhaFwdWsArgs extends FmhaFwdTileArgs {
  /** TMA maps of Q, K and V: boxes of [64 head-dim elements, rows, 1…] with the 128B swizzle and zero fill. */
  readonly qMap: Expr;
  readonly kMap: Expr;
  readonly vMap: Expr;
  /** TMA coordinates of the box with head-dim elements [d0, d0 + 64) of Q rows from `row` (of this block's sequence). */
  qCoords(d0: Expr | number, row: Expr): readonly Expr[];
  /** The same for K and V rows (V's d0 runs over headDimV, from the block's first column of V). */
  kCoords(d0: Expr | number, row: Expr): readonly Expr[];
  vCoords(d0: Expr | number, row: Expr): readonly Expr[];
  /** The key tiles to visit (default: the dense walk over the mask's range, or its split). */
  readonly keyTiles?: FmhaFwdKeyTileWalk;
  /** The P·V gate's runtime values (required with the policy's `pvGate`). */
  readonly pvGate?: FmhaFwdPvSkipArgs;
  /** The dequantization scales (required with the policy's `qkOperand`; Q/K maps then carry int8 boxes [headDim, rows]). */
  readonly int8Scales?: FmhaFwdInt8Scales;
  /** A score modifier at this block's query head (soft-capping, ALiBi): S becomes its log2-domain logits before the mask. */
  readonly scoreModifier?: FmhaScoreAt;
}

/** Name of the kernel's dynamic shared-memory array. */
export const FMHA_DYNAMIC_SMEM = 'tk_fmha_smem';

const SLAB = 64;

/**
 * The sm_90a attention forward main loop (CK-tile's `BlockFmhaPipelineQRKSVS` idea, Hopper
 * machinery as in FlashAttention-3): one producer warpgroup issues TMA loads of Q once and of K
 * and V per key tile into a ring of `stages` buffers on mbarriers; `tileM / 64` consumer
 * warpgroups each own 64 query rows and per key tile run
 * - S = Q·Kᵀ: `WgmmaBlockGemmSs` over the head dim in 64-element slabs (A = Q, B = K, both K-major);
 * - the mask (only on tiles the mask code says need it) and the online softmax of
 *   `BlockOnlineSoftmax` (exp2 domain, row max across the 4 lanes of a row, O rescaled by 2^(m_old − m_new));
 * - P packed to fp16/bf16 pairs in place of the A fragment (`aFragmentOfAccumulator`), then
 *   O += P·V: `WgmmaBlockGemmRs` with V as an MN-major B operand (TMA writes V row-major);
 * and finally O /= l, the natural-log LSE, and a predicated store of O (rows < seqlenQ).
 * Ring protocol per stage s of key tile it (s = it mod S, round r = it / S): the producer waits
 * empty[s] with parity (r & 1) ^ 1, arms full[s] with the box bytes and issues the boxes; each
 * consumer warp arrives on k_empty[s] once S is computed and on v_empty[s] once P·V is.
 * Shared memory (1024-aligned): Q, then S K stages, S V stages, then the barriers.
 * The parts: the ring's barriers (`FmhaFwdWsRing`), the producer (`emitFmhaFwdWsProducer`), the
 * consumers (`emitFmhaFwdWsConsumer`) running the per-tile steps of `FmhaFwdWsTileSteps` in the
 * policy's schedule (`FmhaFwdConsumerSchedule`: sequential, softmax-overlapped or ping-pong).
 */
export class FmhaFwdWsPipeline {
  readonly policy: FmhaFwdWsPolicy;
  /** The policy's Q·Kᵀ source (the default when it has none). */
  readonly qkSource: FmhaFwdQkSource;
  readonly qk: WgmmaBlockGemmSs;
  readonly pv: WgmmaBlockGemmRs;
  /** Consumer threads: `slices` groups of `rowThreads` (the tileM / 64 warpgroups that own the block's rows). */
  readonly consumerThreads: number;
  readonly rowThreads: number;
  /** Column slices of O (`outputSplit`; 1 without). */
  readonly slices: number;
  readonly threads: number;
  /** 64-element slabs of the QK head dim and of V's. */
  readonly slabsQK: number;
  readonly slabsV: number;
  readonly qBytes: number;
  /** K buffers (the ring's stages, or the Q·Kᵀ source's chunk stages) of kStageBytes each. */
  readonly kStages: number;
  readonly kStageBytes: number;
  readonly vStageBytes: number;
  readonly kOffset: number;
  readonly vOffset: number;
  readonly barrierOffset: number;
  /** Where the key-tile walk's shared memory starts (after the barriers). */
  readonly keyTileOffset: number;
  /** Where the P·V gate's shared memory starts (after the walk's; used with `pvGate`). */
  readonly pvGateOffset: number;
  /** Where the output split's exchange starts (after the other regions, 16-aligned). */
  readonly outputSplitOffset: number;
  /** Consumer warps that read and release Q and K (those of the output split's scoring groups). */
  readonly qkWarps: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request (used + 1024 bytes of alignment slack). */
  readonly sharedBytes: number;

  constructor(policy: FmhaFwdWsPolicy) {
    const { dtype, headDim, headDimV, tileM, tileN, stages, producerRegisters: pr, consumerRegisters: cr } = policy;
    const bad = (what: string, rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError(`FmhaFwdWsPipeline ${what}`, rule, String(found));
    };
    const source = policy.qkSource ?? FMHA_FWD_RESIDENT_QK;
    if (!Number.isSafeInteger(headDim) || headDim < 16 || headDim > source.maxHeadDim || headDim % 16 !== 0)
      bad('headDim', `must be a multiple of 16 in [16, ${source.maxHeadDim}]`, headDim);
    const slices = policy.outputSplit?.slices ?? 1;
    if (!Number.isSafeInteger(headDimV) || headDimV < 16 || headDimV > 256 * slices || headDimV % 16 !== 0)
      bad('headDimV', `must be a multiple of 16 in [16, ${256 * slices}]`, headDimV);
    if (![2, 3, 4].includes(stages)) bad('stages', 'must be 2, 3 or 4', stages);
    for (const [what, r] of [
      ['producerRegisters', pr],
      ['consumerRegisters', cr],
    ] as const) {
      if (!Number.isSafeInteger(r) || r < 24 || r > 256 || r % 8 !== 0) bad(what, 'must be a multiple of 8 in [24, 256]', r);
    }
    this.policy = Object.freeze({ ...policy });
    policy.qkOperand?.check(policy);
    policy.pvGate?.check(policy);
    policy.schedule?.check(policy);
    policy.outputSplit?.check(policy);
    source.check(policy);
    this.qkSource = source;
    const operand = policy.qkOperand;
    const tileK = operand?.tileK(headDim) ?? SLAB;
    this.qk = new WgmmaBlockGemmSs({ dtype: operand?.gemmDtype ?? dtype, tileM, tileN, tileK });
    this.slices = slices;
    // With a split, each slice is whole 64-column slabs; the last one may run past d_v (zero-filled V, unstored O).
    const sliceV = slices === 1 ? headDimV : Math.ceil(headDimV / (SLAB * slices)) * SLAB;
    this.pv = new WgmmaBlockGemmRs({ dtype, tileM, tileN: sliceV, tileK: tileN, bMajor: 'MN' });
    this.rowThreads = this.qk.threads;
    this.consumerThreads = this.rowThreads * slices;
    this.threads = this.consumerThreads + 128;
    checkSetMaxNRegBudget(this.threads, pr, cr, (rule, found) => bad('registers', rule, found));
    this.slabsQK = Math.ceil(headDim / tileK);
    this.slabsV = Math.ceil((sliceV * slices) / SLAB);
    const plan = source.plan(this.qk, this.slabsQK, stages);
    this.qBytes = plan.qBytes;
    this.kStages = plan.kStages;
    this.kStageBytes = plan.kStageBytes;
    this.vStageBytes = slices * this.pv.bTileBytes;
    if (this.vStageBytes !== this.slabsV * tileN * 128) bad('V layout', 'must be whole 64-element slabs of tileN rows', this.vStageBytes);
    this.kOffset = this.qBytes;
    this.vOffset = this.kOffset + plan.kStages * this.kStageBytes;
    this.barrierOffset = this.vOffset + stages * this.vStageBytes;
    this.keyTileOffset = this.barrierOffset + 8 * (1 + 4 * stages + plan.barriers);
    const walkBytes = policy.keyTileWalk?.sharedBytes ?? 0;
    if (!Number.isSafeInteger(walkBytes) || walkBytes < 0) bad('keyTileWalk.sharedBytes', 'must be an integer ≥ 0', walkBytes);
    this.pvGateOffset = this.keyTileOffset + Math.ceil(walkBytes / 16) * 16;
    const before = policy.pvGate !== undefined ? this.pvGateOffset + policy.pvGate.sharedBytes : this.keyTileOffset + walkBytes;
    this.outputSplitOffset = Math.ceil(before / 16) * 16;
    this.qkWarps = (this.rowThreads / 32) * (policy.outputSplit?.scoringSlices ?? 1);
    const splitBytes = policy.outputSplit?.sharedBytes(this) ?? 0;
    this.usedBytes = splitBytes > 0 ? this.outputSplitOffset + splitBytes : before;
    this.sharedBytes = this.usedBytes + 1024;
    if (this.sharedBytes > 232448) bad('shared memory', 'must fit the 227 KiB an sm_90 block may use', this.sharedBytes);
  }

  /** Query tiles of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number {
    return Math.ceil(seqlenQ / this.policy.tileM);
  }

  /** Emits the whole kernel body into `b`: shared memory and the ring, the key-tile walk, then the producer and consumer roles. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdWsArgs): void {
    const P = this.policy;
    const S = P.stages;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(
      `dynamic shared memory, aligned up to 1024 bytes: Q (${this.qBytes} B), ${S} K stages (` +
        `${this.kStageBytes} B), ${S} V stages (${this.vStageBytes} B), barriers`,
    );
    const { smem, smemAddr } = declareAlignedDynamicShared(b, target, FMHA_DYNAMIC_SMEM);
    const bars = b.let('bars', pointer(uint64), cast(add(smem, this.barrierOffset), pointer(uint64)));
    const ring = new FmhaFwdWsRing(target, bars, S);
    ring.emitInit(b, tid, { k: this.qkWarps, v: this.consumerThreads / 32 }, (t) => {
      this.qkSource.emitInit(t, { target, ring }, this.qkWarps);
      P.outputSplit?.emitInit(t, { target, smem, pipeline: this });
    });
    const walk = args.keyTiles ?? new DenseKeyTileWalk(args.mask, args.split);
    this.#checkArgs(walk, args);
    const walkCtx = { target, tid, shared: add(smem, this.keyTileOffset), m0: args.m0, tileM: P.tileM, tileN: P.tileN };
    walk.emitBeforeSync(b, walkCtx);
    b.push(target.syncThreads());
    this.qkSource.emitAfterInit?.(b, target);

    const iters = walk.emitIters(b, walkCtx);
    const ctx: FmhaFwdWsContext = { pipeline: this, target, args, tid, smem, smemAddr, ring, walk, walkCtx, iters };
    b.if(
      ge(tid, this.consumerThreads),
      (prod) => emitFmhaFwdWsProducer(prod, ctx),
      (cons) => {
        emitFmhaFwdWsConsumer(cons, ctx);
        this.qkSource.emitBeforeExit?.(cons, target);
      },
    );
  }

  /** The walk fits the policy's `keyTileWalk`; the gate's values and the int8 scales come exactly with the policy's `pvGate` and `qkOperand`. */
  #checkArgs(walk: FmhaFwdKeyTileWalk, args: FmhaFwdWsArgs): void {
    const P = this.policy;
    const reserved = P.keyTileWalk?.sharedBytes ?? 0;
    if (walk.sharedBytes > reserved) {
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline keyTiles',
        `the walk needs ${walk.sharedBytes} bytes of shared memory: set keyTileWalk`,
        String(reserved),
      );
    }
    if ((P.pvGate !== undefined) !== (args.pvGate !== undefined))
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline pvGate',
        'runtime P·V gate values are given exactly when the policy has pvGate',
        String(P.pvGate?.tag),
      );
    if ((P.qkOperand !== undefined) !== (args.int8Scales !== undefined))
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline int8Scales',
        'are given exactly when the policy has qkOperand',
        String(P.qkOperand?.tag),
      );
  }
}
