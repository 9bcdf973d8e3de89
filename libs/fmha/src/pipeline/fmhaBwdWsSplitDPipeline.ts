import {
  checkSetMaxNRegBudget,
  add,
  cast,
  declareAlignedDynamicShared,
  eq,
  fenceMbarrierInit,
  ge,
  clusterCtaRank,
  clusterSync,
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
import type { FmhaBwdWsSplitDDqOrder } from './fmhaBwdWsSplitDDqOrder.ts';
import type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';
import { emitFmhaBwdWsSplitDProducer } from './fmhaBwdWsSplitDProducer.ts';
import { checkSplitDOperands, isMultipleIn, splitDPolicyError } from './splitDPolicyError.ts';

/** Policy of {@link FmhaBwdWsSplitDPipeline} (the sm_90a dq_dk_dv kernel of FFPA's backward). */
export interface FmhaBwdWsSplitDPolicy {
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q/K: a multiple of 64 up to 1024. */
  readonly headDim: number;
  /** Head dim of V/dO: a multiple of 64 up to headDim. */
  readonly headDimV: number;
  /** dK/dV/dQ columns (and K/V columns held) per CTA: 256 (128 per consumer warpgroup). */
  readonly sliceWidth: number;
  /** Q/dO slice stages (each the query tile's 64 rows × the CTA's columns of Q and dO): 1 or 2. */
  readonly sliceStages: number;
  readonly producerRegisters: number;
  readonly consumerRegisters: number;
  /** The order of dQ's adds into dq_acc (default FMHA_BWD_SPLIT_D_ANY_DQ_ORDER; FMHA_BWD_SPLIT_D_KEY_DQ_ORDER: deterministic). */
  readonly dqOrder?: FmhaBwdWsSplitDDqOrder;
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
  /** `int`: the cluster's first key row (64 keys); the CTA's columns follow from its rank in the cluster. */
  readonly n0: Expr;
  /** `float*` of dq_acc at row 0 of a query head (rows of headDim floats, atomic layout). */
  dqRow(b: BlockBuilder, head: Expr): Expr;
  /** `int*` of the counter of the query tile at row i0 of a query head (the workspace's `ordered` layout): key order only. */
  dqCounter?(b: BlockBuilder, head: Expr, i0: Expr): Expr;
  /** dK and dV views [rows, headDim] / [rows, headDimV] of this batch and key head (rows: the stores' bound). */
  readonly dk: TensorView;
  readonly dv: TensorView;
  readonly symbols: Readonly<Record<string, Expr>>;
}

export const FMHA_BWD_WS_SPLIT_D_SMEM = 'tk_ffpa_bwd_smem';

const NAME = 'FmhaBwdWsSplitDPipeline';

/**
 * The sm_90a backward of large head dims (FFPA's split-D on Hopper, without recomputation): the
 * head dims are cut into slices of `sliceWidth` columns, and the `clusterCtas` CTAs of a cluster
 * (the slices rounded up to 1, 2 or 4) share 64 keys of one key head, CTA r owning columns
 * [r·w, (r + 1)·w) of K, V, Q, dO, dK, dV and dQ (zero-filled past the head dims). K and V of its
 * keys × columns stay in shared memory (TMA once); the CTA walks every query tile (64 rows) of every
 * query head of its GQA group that its keys meet, a producer warpgroup streaming the tile's Q and
 * dO columns by TMA into `sliceStages` stages. Two consumer warpgroups per query tile:
 * - partial Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ over the CTA's columns (each warpgroup 32 of the 64 queries),
 *   completed by a butterfly through distributed shared memory: at step k each CTA stores its
 *   partials (fp32) into CTA r ⊕ 2^k's exchange buffer with `st.async` and adds that CTA's from its
 *   own, so after log2(CTAs) steps every CTA holds the same full Sᵀ and dPᵀ (each step's sum the
 *   same in both CTAs: a + b = b + a);
 * - the mask, Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e), dSᵀ = scale·Pᵀ∘(dPᵀ − D); Pᵀ and dSᵀ
 *   (fp16/bf16) into the exchange buffer once every warp has read the peer's partials;
 * - per warpgroup 128 of the CTA's columns: dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols] (fp32
 *   registers across the query tiles; skipped past the head dims), then dQ[:, cols] = dS·K[:, cols]
 *   in two halves of 64 columns, staged as fp32 rows in the query tile's stage (its Q and dO are
 *   read by then); a dQ warp of the producer warpgroup adds each row into the workspace's dq_acc
 *   with one TMA bulk reduction (`cp.reduce.async.bulk … add.f32`: whole L2 sectors, not one
 *   atomic per element) and frees the stage once they have read it.
 * Every GEMM is done once (no S/dP recomputation per slice). The exchange buffer's hand-offs: a CTA
 * frees its buffer for step k + 1's partner once its warps read step k's partials, and for step 0's
 * partner once its dV/dK/dQ GEMMs have read Pᵀ and dSᵀ; full barriers take the peer's bytes
 * (armed by the receiver), empty barriers the peer's warps (remote arrivals). Cluster barriers
 * after the barriers' initialisation and before the consumers leave keep each CTA's shared memory
 * alive while its peers use it.
 *
 * Where each part is emitted: the producer (its TMA warp and its dQ warp) in fmhaBwdWsSplitDProducer.ts, the consumers in
 * fmhaBwdWsSplitDConsumer.ts, the exchange in fmhaBwdWsSplitDExchange.ts, what they share in
 * fmhaBwdWsSplitDContext.ts.
 */
export class FmhaBwdWsSplitDPipeline {
  readonly policy: FmhaBwdWsSplitDPolicy;
  readonly keyTags = Object.freeze({ sliceWidth: 'w', sliceStages: 's' });
  readonly tileN = 64;
  readonly tileM = 64;
  /** Partial Sᵀ and dPᵀ (64 keys × 64 queries, 32 queries per warpgroup, over the CTA's slabs). */
  readonly sT: WgmmaBlockGemmSs;
  /** dV and dK (64 keys × the CTA's columns, 128 per warpgroup, A = Pᵀ / dSᵀ from shared memory). */
  readonly kv: WgmmaBlockGemmSs;
  /** dQ of half the CTA's columns (64 queries × 128 columns, 64 per warpgroup; A = dS read query-major from the dSᵀ tile). */
  readonly dq: WgmmaBlockGemmSs;
  readonly consumerThreads = 256;
  readonly threads = 384;
  /** 64-column slabs per CTA (of K, V and the Q/dO stages). */
  readonly sliceSlabs: number;
  /** Column slices of the head dims, and the CTAs of a cluster (the slices rounded up to a power of two). */
  readonly slices: number;
  readonly clusterCtas: number;
  /** Butterfly steps of the partial-score exchange: log2(clusterCtas). */
  readonly exchanges: number;
  readonly offsets: {
    readonly k: number;
    readonly v: number;
    /** Stage s's Q slabs at qSlice + s·stageBytes, dO slabs at doSlice + s·stageBytes, LSE/D rows at rows + s·512. */
    readonly qSlice: number;
    readonly doSlice: number;
    readonly rows: number;
    /** The exchange buffer (partial Sᵀ then dPᵀ, fp32), later Pᵀ (pT) and dSᵀ (dsT). */
    readonly x: number;
    readonly pT: number;
    readonly dsT: number;
    readonly bars: number;
  };
  readonly stageBytes: number;
  /** Bytes a CTA sends per exchange step: its partial Sᵀ and dPᵀ. */
  readonly exchangeBytes: number;
  readonly usedBytes: number;
  readonly sharedBytes: number;

  constructor(policy: FmhaBwdWsSplitDPolicy) {
    const { dtype, headDim, headDimV, sliceWidth, sliceStages, producerRegisters: pr, consumerRegisters: cr } = policy;
    checkSplitDOperands(NAME, dtype, headDim);
    if (!isMultipleIn(headDimV, 64, 64, headDim))
      splitDPolicyError(NAME, 'headDimV', `must be a multiple of 64 in [64, headDim ${headDim}]`, headDimV);
    if (sliceWidth !== 256) splitDPolicyError(NAME, 'sliceWidth', 'must be 256 (128 columns per consumer warpgroup)', sliceWidth);
    if (sliceStages !== 1 && sliceStages !== 2) splitDPolicyError(NAME, 'sliceStages', 'must be 1 or 2', sliceStages);
    // setmaxnreg.inc can only take what the producer's setmaxnreg.dec gave back, or it waits forever.
    checkSetMaxNRegBudget(384, pr, cr, (rule, found) => splitDPolicyError(NAME, 'registers', rule, found));
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
    this.sliceSlabs = sliceWidth / FMHA_BWD_SLAB;
    this.slices = splitDBwdSliceCount(headDim, headDimV, sliceWidth);
    this.clusterCtas = 2 ** Math.ceil(Math.log2(this.slices));
    this.exchanges = Math.log2(this.clusterCtas);
    const slab = FMHA_BWD_SLAB_BYTES;
    this.stageBytes = 2 * this.sliceSlabs * slab;
    this.exchangeBytes = 2 * 64 * 64 * 4;
    const k = 0;
    const v = k + this.sliceSlabs * slab;
    const qSlice = v + this.sliceSlabs * slab;
    const doSlice = qSlice + this.sliceSlabs * slab;
    const x = qSlice + sliceStages * this.stageBytes;
    const pT = x;
    const dsT = x + slab;
    const rows = x + Math.max(this.exchanges > 0 ? this.exchangeBytes : 0, 2 * slab);
    // LSE·log2 e and D of the query tile's 64 rows (fp32) per stage.
    const bars = rows + sliceStages * 2 * 64 * 4;
    this.offsets = Object.freeze({ k, v, qSlice, doSlice, rows, x, pT, dsT, bars });
    // Barriers: K/V full, slice full/empty and dQ staged per stage, exchange full/empty per step.
    this.usedBytes = bars + 8 * (1 + 3 * sliceStages + 2 * this.exchanges);
    this.sharedBytes = this.usedBytes + 1024;
    if (this.sharedBytes > 232448)
      splitDPolicyError(NAME, 'shared memory', 'must fit the 227 KiB an sm_90 block may use', this.sharedBytes);
  }

  /** Clusters along the keys for `seqlenK` keys (each `clusterCtas` CTAs along x). */
  keyTiles(seqlenK: number): number {
    return Math.ceil(seqlenK / this.tileN);
  }

  /** Emits the whole kernel body into `b` (the kernel launches clusters of [clusterCtas, 1, 1] along x). */
  emit(b: BlockBuilder, target: Target, args: FmhaBwdWsSplitDArgs): void {
    const S = this.policy.sliceStages;
    const E = this.exchanges;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });
    b.comment(
      `dynamic shared memory (1024-aligned): this CTA's ${this.sliceSlabs} slabs of K and of V, ${S} stage(s) of its Q and dO ` +
        `slabs, the exchange buffer (then Pᵀ, dSᵀ), LSE/D rows, barriers`,
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
      rank: b.let('cta_rank', int32, E > 0 ? cast(clusterCtaRank(target), int32) : lit(0, int32)),
      kvFull: bars,
      sliceFull: (s) => add(bars, add(1, s)),
      sliceEmpty: (s) => add(bars, add(1 + S, s)),
      dqStaged: (s) => add(bars, add(1 + 2 * S, s)),
      xFull: (k) => add(bars, add(1 + 3 * S, k)),
      xEmpty: (k) => add(bars, add(1 + 3 * S + E, k)),
    };
    b.if(eq(tid, 0), (t) => {
      t.expr(mbarrierInit(target, ctx.kvFull, 1));
      for (let s = 0; s < S; s++) {
        // The TMA lane's expect_tx plus one arrival per producer-warp lane once its LSE/D rows are staged.
        t.expr(mbarrierInit(target, ctx.sliceFull(lit(s, int32)), 1 + 32));
        // Empty: the dQ warp, once its bulk reductions have read the stage's dQ tile; staged: every consumer thread.
        t.expr(mbarrierInit(target, ctx.sliceEmpty(lit(s, int32)), 1));
        t.expr(mbarrierInit(target, ctx.dqStaged(lit(s, int32)), this.consumerThreads));
      }
      for (let k = 0; k < E; k++) {
        // Full: the receiving thread's expect_tx (the peer's st.async bytes complete it); empty: the peer's 8 consumer warps.
        t.expr(mbarrierInit(target, ctx.xFull(lit(k, int32)), 1));
        t.expr(mbarrierInit(target, ctx.xEmpty(lit(k, int32)), this.consumerThreads / 32));
      }
      t.expr(fenceMbarrierInit(target));
    });
    b.push(target.syncThreads());
    if (E > 0) {
      b.comment('cluster barrier: every CTA of the cluster has initialised its barriers');
      b.expr(clusterSync(target));
    }
    b.if(
      ge(tid, this.consumerThreads),
      (prod) => emitFmhaBwdWsSplitDProducer(prod, ctx),
      (cons) => emitFmhaBwdWsSplitDConsumers(cons, ctx),
    );
  }
}
