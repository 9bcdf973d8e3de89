import {
  add,
  cast,
  declareAlignedDynamicShared,
  eq,
  fenceMbarrierInit,
  ge,
  int32,
  lit,
  mbarrierInit,
  pointer,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { WgmmaBlockGemmSs } from '@tilekit/gemm';
import type { TensorView } from '@tilekit/tile';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';
import { splitDBwdSliceCount } from './fmhaBwdSm80SplitDPipeline.ts';
import { FMHA_BWD_SLAB, FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
import { emitFmhaBwdWsSplitDConsumers } from './fmhaBwdWsSplitDConsumer.ts';
import type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';
import { emitFmhaBwdWsSplitDProducer } from './fmhaBwdWsSplitDProducer.ts';
import { checkSplitDOperands, isMultipleIn, splitDPolicyError } from './splitDPolicyError.ts';

/** Policy of {@link FmhaBwdWsSplitDPipeline} (the sm_90a dq_dk_dv kernel of FFPA's backward). */
export interface FmhaBwdWsSplitDPolicy {
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q/K: a multiple of 64 (K of the block's keys stays in shared memory whole). */
  readonly headDim: number;
  /** Head dim of V/dO: a multiple of 64 (V stays in shared memory whole). */
  readonly headDimV: number;
  /** dK/dV/dQ columns per block: 256 (128 per consumer warpgroup). */
  readonly sliceWidth: number;
  /** Slots of the ring that streams the Q and dO slabs outside the block's slice: 1 to 4. */
  readonly ringSlabs: number;
  readonly producerRegisters: number;
  readonly consumerRegisters: number;
}

/** What the kernel hands the pipeline. */
export interface FmhaBwdWsSplitDArgs {
  /** TMA maps of Q, K, V, dO ([64 head-dim elements, 64 rows, 1, 1] boxes, 128B swizzle, zero fill). */
  readonly qMap: Expr;
  readonly kMap: Expr;
  readonly vMap: Expr;
  readonly doMap: Expr;
  /** `const float*` of LSE and of D for a query head at row 0 of this sequence. */
  lseRow(b: BlockBuilder, head: Expr): Expr;
  dRow(b: BlockBuilder, head: Expr): Expr;
  /** TMA coordinates of a Q/dO box (head-dim offset, first row of this sequence, query head). */
  qCoords(d0: Expr, row: Expr, head: Expr): readonly Expr[];
  /** Of a K/V box (the block's key/value head). */
  kvCoords(d0: Expr, row: Expr): readonly Expr[];
  readonly seqlenQ: Expr;
  readonly seqlenK: Expr;
  /** `int`: query heads per key/value head; the block's query heads are firstHead … firstHead + ratio − 1. */
  readonly headRatio: Expr;
  readonly firstHead: Expr;
  /** `float`: the softmax scale and scale · log2 e. */
  readonly scale: Expr;
  readonly scaleLog2: Expr;
  readonly mask: GenericAttentionMaskCode;
  /** `int`: the block's first key row (64 keys) and its column slice. */
  readonly n0: Expr;
  readonly slice: Expr;
  /** `float*` of dq_acc at row 0 of a query head (rows of headDim floats, atomic layout). */
  dqRow(b: BlockBuilder, head: Expr): Expr;
  /** dK and dV views [rows, headDim] / [rows, headDimV] of this batch and key head (rows: the stores' bound). */
  readonly dk: TensorView;
  readonly dv: TensorView;
  readonly symbols: Readonly<Record<string, Expr>>;
}

export const FMHA_BWD_WS_SPLIT_D_SMEM = 'tk_ffpa_bwd_smem';

const NAME = 'FmhaBwdWsSplitDPipeline';

/**
 * The sm_90a backward of large head dims (FFPA's split-D, Hopper): a block owns 64 keys of one key
 * head and one column slice of `sliceWidth` columns, K and V of its keys resident in shared memory
 * (whole head dims, TMA once), and walks every query tile (64 rows) of every query head of its GQA
 * group that its keys meet. A producer warpgroup streams each query tile's Q and dO by TMA in
 * 64-column slabs: the slabs inside the block's slice into a slice buffer (kept for the slice's
 * GEMMs), the others through a ring of `ringSlabs` slots. Two consumer warpgroups per query tile:
 * - Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ over the whole head dims (each warpgroup 32 of the 64 queries: no
 *   replicated work), the mask, Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e), dSᵀ = scale·Pᵀ∘(dPᵀ − D);
 * - Pᵀ and dSᵀ to shared memory (fp16/bf16), then per warpgroup 128 of the slice's columns:
 *   dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols] (fp32 registers across the query tiles; skipped
 *   where the warpgroup's columns lie past the head dims), then dQ = dS·K over the slice in two
 *   halves of 64 columns per warpgroup, each added into the workspace's dq_acc with `red.global.add.f32`.
 * S and dP are recomputed once per slice (⌈d / sliceWidth⌉ times), the other three GEMMs done once.
 * The slice past the head dim (d not a multiple of the width) reads zero-filled Q/dO columns; its
 * dK/dV/dQ columns there are never stored.
 *
 * Where each part is emitted: the producer in fmhaBwdWsSplitDProducer.ts, the consumers in
 * fmhaBwdWsSplitDConsumer.ts, what they share in fmhaBwdWsSplitDContext.ts.
 */
export class FmhaBwdWsSplitDPipeline {
  readonly policy: FmhaBwdWsSplitDPolicy;
  readonly keyTags = Object.freeze({ sliceWidth: 'w', ringSlabs: 'r' });
  readonly tileN = 64;
  readonly tileM = 64;
  /** Sᵀ and dPᵀ (64 keys × 64 queries, 32 queries per warpgroup). */
  readonly sT: WgmmaBlockGemmSs;
  /** dV and dK (64 keys × the slice, 128 columns per warpgroup, A = Pᵀ / dSᵀ from shared memory). */
  readonly kv: WgmmaBlockGemmSs;
  /** dQ of half the slice (64 queries × 128 columns, 64 per warpgroup; A = dS read query-major from the dSᵀ tile). */
  readonly dq: WgmmaBlockGemmSs;
  readonly consumerThreads = 256;
  readonly threads = 384;
  readonly qkSlabs: number;
  readonly vSlabs: number;
  readonly sliceSlabs: number;
  readonly slices: number;
  readonly offsets: {
    readonly k: number;
    readonly v: number;
    readonly qSlice: number;
    readonly doSlice: number;
    readonly ring: number;
    readonly pT: number;
    readonly dsT: number;
    readonly rows: number;
    readonly bars: number;
  };
  readonly usedBytes: number;
  readonly sharedBytes: number;

  constructor(policy: FmhaBwdWsSplitDPolicy) {
    const { dtype, headDim, headDimV, sliceWidth, ringSlabs, producerRegisters: pr, consumerRegisters: cr } = policy;
    checkSplitDOperands(NAME, dtype, headDim);
    if (!isMultipleIn(headDimV, 64, 64, headDim))
      splitDPolicyError(NAME, 'headDimV', `must be a multiple of 64 in [64, headDim ${headDim}]`, headDimV);
    if (sliceWidth !== 256) splitDPolicyError(NAME, 'sliceWidth', 'must be 256 (128 columns per consumer warpgroup)', sliceWidth);
    if (!isMultipleIn(ringSlabs, 1, 1, 4)) splitDPolicyError(NAME, 'ringSlabs', 'must be 1, 2, 3 or 4', ringSlabs);
    if (pr * 128 + cr * 256 > 65536)
      splitDPolicyError(NAME, 'registers', 'producer + consumer budgets must fit the 64K-register file', `${pr}·128 + ${cr}·256`);
    this.policy = Object.freeze({ ...policy });
    this.sT = new WgmmaBlockGemmSs({ dtype, tileM: 64, tileN: 64, tileK: FMHA_BWD_SLAB, warpgroupsN: 2 });
    this.kv = new WgmmaBlockGemmSs({ dtype, tileM: 64, tileN: sliceWidth, tileK: FMHA_BWD_SLAB, bMajor: 'MN', warpgroupsN: 2 });
    this.dq = new WgmmaBlockGemmSs({
      dtype,
      tileM: 64,
      tileN: sliceWidth / 2,
      tileK: FMHA_BWD_SLAB,
      aMajor: 'MN',
      bMajor: 'MN',
      warpgroupsN: 2,
    });
    this.qkSlabs = headDim / FMHA_BWD_SLAB;
    this.vSlabs = headDimV / FMHA_BWD_SLAB;
    this.sliceSlabs = sliceWidth / FMHA_BWD_SLAB;
    this.slices = splitDBwdSliceCount(headDim, headDimV, sliceWidth);
    const k = 0;
    const v = k + this.qkSlabs * FMHA_BWD_SLAB_BYTES;
    const qSlice = v + this.vSlabs * FMHA_BWD_SLAB_BYTES;
    const doSlice = qSlice + this.sliceSlabs * FMHA_BWD_SLAB_BYTES;
    const ring = doSlice + this.sliceSlabs * FMHA_BWD_SLAB_BYTES;
    const pT = ring + ringSlabs * FMHA_BWD_SLAB_BYTES;
    const dsT = pT + FMHA_BWD_SLAB_BYTES;
    const rows = dsT + FMHA_BWD_SLAB_BYTES;
    // LSE·log2 e and D of the query tile's 64 rows (fp32), staged with the slice.
    const bars = rows + 2 * 64 * 4;
    this.offsets = Object.freeze({ k, v, qSlice, doSlice, ring, pT, dsT, rows, bars });
    // Barriers: K/V full, slice full/empty, ring full/empty per slot.
    this.usedBytes = bars + 8 * (3 + 2 * ringSlabs);
    this.sharedBytes = this.usedBytes + 1024;
    if (this.sharedBytes > 232448)
      splitDPolicyError(NAME, 'shared memory', 'must fit the 227 KiB an sm_90 block may use', this.sharedBytes);
  }

  /** Blocks along the keys of one slice for `seqlenK` keys. */
  keyTiles(seqlenK: number): number {
    return Math.ceil(seqlenK / this.tileN);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaBwdWsSplitDArgs): void {
    const R = this.policy.ringSlabs;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });
    b.comment(
      `dynamic shared memory (1024-aligned): K ${this.qkSlabs} slabs, V ${this.vSlabs} slabs, Q and dO slices ` +
        `${this.sliceSlabs} slabs each, ring ${R} slabs, Pᵀ, dSᵀ, LSE/D rows, barriers`,
    );
    const { smem, smemAddr } = declareAlignedDynamicShared(b, target, FMHA_BWD_WS_SPLIT_D_SMEM);
    const bars = b.let('bars', pointer(uint64), cast(add(smem, this.offsets.bars), pointer(uint64)));
    const ctx: FmhaBwdWsSplitDContext = {
      pipeline: this,
      target,
      args,
      smem,
      smemAddr,
      tid,
      kvFull: bars,
      sliceFull: add(bars, 1),
      sliceEmpty: add(bars, 2),
      ringFull: (s) => add(bars, add(3, s)),
      ringEmpty: (s) => add(bars, add(3 + R, s)),
    };
    b.if(eq(tid, 0), (t) => {
      t.expr(mbarrierInit(target, ctx.kvFull, 1));
      // The TMA lane's expect_tx plus one arrival per producer-warp lane once its LSE/D rows are staged.
      t.expr(mbarrierInit(target, ctx.sliceFull, 1 + 32));
      t.expr(mbarrierInit(target, ctx.sliceEmpty, this.consumerThreads));
      for (let s = 0; s < R; s++) {
        t.expr(mbarrierInit(target, ctx.ringFull(lit(s, int32)), 1));
        t.expr(mbarrierInit(target, ctx.ringEmpty(lit(s, int32)), this.consumerThreads));
      }
      t.expr(fenceMbarrierInit(target));
    });
    b.push(target.syncThreads());
    b.if(
      ge(tid, this.consumerThreads),
      (prod) => emitFmhaBwdWsSplitDProducer(prod, ctx),
      (cons) => emitFmhaBwdWsSplitDConsumers(cons, ctx),
    );
  }
}
