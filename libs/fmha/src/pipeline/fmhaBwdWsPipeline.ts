import {
  checkSetMaxNRegBudget,
  add,
  cast,
  declareAlignedDynamicShared,
  div,
  eq,
  fenceMbarrierInit,
  ge,
  int32,
  maxOf,
  mbarrierInit,
  pointer,
  sub,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockGemmPolicyError, WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import type { TensorView } from '@tilekit/tile';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';
import { emitFmhaBwdWsConsumers } from './fmhaBwdWsConsumer.ts';
import { FMHA_BWD_SLAB, type FmhaBwdWsContext } from './fmhaBwdWsContext.ts';
import { emitFmhaBwdWsProducer } from './fmhaBwdWsProducer.ts';
import type { FmhaScoreModifierSite } from '../scoreMod/fmhaScoreModifier.ts';

/** Policy of {@link FmhaBwdWsPipeline}. */
export interface FmhaBwdWsPolicy {
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q/K (a multiple of 64 up to 128 here: dK and dV both live in registers). */
  readonly headDim: number;
  /** Head dim of V/dO (a multiple of 64 up to 128). */
  readonly headDimV: number;
  /** Key rows per block: 64 per consumer warpgroup (128: two warpgroups). */
  readonly tileN: number;
  /** Query rows per iteration: 64 or 128. */
  readonly tileM: number;
  /** Q/dO shared-memory stages: 2 or 3. */
  readonly stages: number;
  readonly producerRegisters: number;
  readonly consumerRegisters: number;
  /**
   * How dQ partials reach the workspace: `atomic` adds them into split 0 with `red.global.add`
   * (any order: not bitwise reproducible); `split` gives every block its own split slot, stored on
   * its first key tile and added to (non-atomically, in a fixed order) on later ones: deterministic.
   */
  readonly dqMode: 'atomic' | 'split';
}

/** What the kernel hands the pipeline. */
export interface FmhaBwdWsArgs {
  /** TMA maps of Q, K, V, dO as in the forward ([64 head-dim elements, rows, 1, 1] boxes, 128B swizzle). */
  readonly qMap: Expr;
  readonly kMap: Expr;
  readonly vMap: Expr;
  readonly doMap: Expr;
  /**
   * `const float*` of LSE and of D for a query head, at row 0 of this sequence (rows contiguous).
   * The producer warp stages them in shared memory with plain loads (TMA would need 16-byte row
   * strides, which ragged LSE layouts do not have).
   */
  lseRow(b: BlockBuilder, head: Expr): Expr;
  dRow(b: BlockBuilder, head: Expr): Expr;
  /** TMA coordinates of a Q/dO box (head-dim offset, first row of this sequence, query head). */
  qCoords(d0: number, row: Expr, head: Expr): readonly Expr[];
  /** Of a K/V box (the block's key/value head). */
  kvCoords(d0: number, row: Expr): readonly Expr[];
  readonly seqlenQ: Expr;
  readonly seqlenK: Expr;
  /** `int`: query heads per key/value head (GQA); the block's query heads are firstHead … firstHead + ratio − 1. */
  readonly headRatio: Expr;
  readonly firstHead: Expr;
  /** `float`: the softmax scale and scale · log2 e. */
  readonly scale: Expr;
  readonly scaleLog2: Expr;
  readonly mask: GenericAttentionMaskCode;
  /** Key tiles of this block: kt = first, first + step, … < count. */
  readonly keyTiles: { readonly first: Expr; readonly step: Expr; readonly count: Expr };
  /** `float*` of dq_acc for (query head, split) = row 0: `dqRow(head)` (split chosen by the kernel). */
  dqAcc(b: BlockBuilder, head: Expr): Expr;
  /** dK and dV views [seqlenK, headDim] / [seqlenK, headDimV] (offset to this batch and key head) and the symbols they use. */
  readonly dk: TensorView;
  readonly dv: TensorView;
  readonly symbols: Readonly<Record<string, Expr>>;
  /** A score modifier (soft-capping, ALiBi), applied at each query tile's head before the mask. */
  readonly scoreModifier?: FmhaScoreModifierSite;
}

export const FMHA_BWD_DYNAMIC_SMEM = 'tk_fmha_bwd_smem';

/**
 * The sm_90a attention backward main loop (CK-tile's `dq_dk_dv` kernel; FlashAttention-2/3's
 * key-tile-major order): a block owns `tileN` key/value rows (64 per consumer warpgroup) with K and V
 * resident in shared memory, and walks the query tiles that see them (the mask's
 * `getTileRangeAlongY`), for each query head of its key/value head (GQA: dK, dV summed in
 * registers). A producer warpgroup streams Q, dO, LSE and D tiles by TMA through `stages` buffers.
 * Per query tile each consumer warpgroup (its 64 key rows) computes, transposed so that dK and dV
 * stay in its registers:
 * - Sᵀ = K·Qᵀ (`WgmmaBlockGemmSs`, head dim in 64-wide slabs), the mask on edge tiles,
 *   Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e) (the forward's probabilities, from its LSE);
 * - dV += Pᵀ·dO (`WgmmaBlockGemmRs`, Pᵀ packed from the accumulator, dO N-major);
 * - dPᵀ = V·dOᵀ, dSᵀ = scale · Pᵀ ∘ (dPᵀ − D) (D = rowsum(dO ∘ O) from the dot_do_o kernel);
 * - dK += dSᵀ·Q (register A, Q N-major);
 * - dSᵀ to shared memory (as the M-major A of the next GEMM), then dQ = dS·K by both warpgroups
 *   (`WgmmaBlockGemmSs` with M- and N-major operands, split over the warpgroups along N for 64-row
 *   query tiles, along M for 128-row ones), added into the workspace's dq_acc per `dqMode`.
 * After a key tile's last query tile: dK and dV, cast, predicated on rows < seqlenK.
 * K and V are stored in 64-row chunks ([chunk][slab][64][64]) so that both the K-major reads of
 * Sᵀ and the N-major reads of dQ are whole standard tiles.
 *
 * Where each part is emitted: the producer role in fmhaBwdWsProducer.ts; the consumers' schedule
 * (key tiles, their query tiles, the dK/dV epilogue) in fmhaBwdWsConsumer.ts over the per-tile
 * steps of fmhaBwdWsTileSteps.ts; dQ into dq_acc in fmhaBwdDqAccumulation.ts; what the roles share
 * (barriers, ring stages, query ranges) in fmhaBwdWsContext.ts.
 */
export class FmhaBwdWsPipeline {
  readonly policy: FmhaBwdWsPolicy;
  readonly sT: WgmmaBlockGemmSs;
  readonly dpT: WgmmaBlockGemmSs;
  readonly dvGemm: WgmmaBlockGemmRs;
  readonly dkGemm: WgmmaBlockGemmRs;
  readonly dqGemm: WgmmaBlockGemmSs;
  /** Head dim 256: the warpgroups share their key rows and split dK, dV, dQ along the head dim. */
  readonly wide: boolean;
  /** How the two consumer warpgroups share dQ = dS·K: by query rows (M), head-dim slabs (N) or key chunks (K). */
  readonly dqSplit: 'M' | 'N' | 'K';
  readonly consumerThreads: number;
  readonly threads: number;
  readonly slabsQK: number;
  readonly slabsV: number;
  readonly chunks: number;
  readonly kBytes: number;
  readonly vBytes: number;
  readonly qStageBytes: number;
  readonly doStageBytes: number;
  readonly dsBytes: number;
  readonly offsets: {
    readonly k: number;
    readonly v: number;
    readonly q: number;
    readonly dO: number;
    readonly ds: number;
    readonly lse: number;
    readonly dqStage: number;
    readonly bars: number;
  };
  /** Bytes of one stage's LSE (or D) rows. */
  readonly rowStageBytes: number;
  /** fp32 dQ staging: the bulk reduce's source (atomic mode), or the second warpgroup's partial (split mode with a key split). */
  readonly dqStageBytes: number;
  readonly usedBytes: number;
  readonly sharedBytes: number;

  constructor(policy: FmhaBwdWsPolicy) {
    const { dtype, headDim, headDimV, tileN, tileM, stages, producerRegisters: pr, consumerRegisters: cr } = policy;
    const bad = (what: string, rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError(`FmhaBwdWsPipeline ${what}`, rule, String(found));
    };
    for (const [what, d] of [
      ['headDim', headDim],
      ['headDimV', headDimV],
    ] as const)
      if (![64, 128, 256].includes(d)) bad(what, 'must be 64, 128 or 256', d);
    // Head dim 256: dK and dV of 64 key rows take 128 registers each, too many for one warpgroup.
    // Both consumer warpgroups then share 64 key rows: Sᵀ and dPᵀ computed by both (replicas),
    // dK, dV and dQ split over them along the head dim; dQ goes to dq_acc by red.global (the
    // staging tile would not fit next to Q and dO).
    this.wide = headDim > 128 || headDimV > 128;
    if (this.wide) {
      if (tileN !== 64 || tileM !== 64) bad('tiles', 'must be 64 key rows × 64 query rows at head dim 256', `${tileN}×${tileM}`);
      if (policy.dqMode !== 'atomic') bad('dqMode', 'must be atomic at head dim 256 (no deterministic instance yet)', policy.dqMode);
    } else if (tileN !== 128) bad('tileN', 'must be 128 (two consumer warpgroups of 64 key rows)', tileN);
    if (![64, 128].includes(tileM)) bad('tileM', 'must be 64 or 128', tileM);
    if (![2, 3].includes(stages)) bad('stages', 'must be 2 or 3', stages);
    if (policy.dqMode !== 'atomic' && policy.dqMode !== 'split') bad('dqMode', 'must be atomic or split', policy.dqMode);
    this.policy = Object.freeze({ ...policy });
    this.sT = new WgmmaBlockGemmSs({ dtype, tileM: tileN, tileN: tileM, tileK: FMHA_BWD_SLAB, ...(this.wide ? { warpgroupsK: 2 } : {}) });
    this.dpT = this.sT;
    const split = this.wide ? { warpgroupsN: 2 } : {};
    this.dvGemm = new WgmmaBlockGemmRs({ dtype, tileM: tileN, tileN: headDimV, tileK: tileM, bMajor: 'MN', ...split });
    this.dkGemm = new WgmmaBlockGemmRs({ dtype, tileM: tileN, tileN: headDim, tileK: tileM, bMajor: 'MN', ...split });
    // dQ (tileM × headDim) over the two consumer warpgroups: along M for 128 query rows; for 64,
    // along N when the head dim makes two 64-wide slabs, else along K (each warpgroup its own
    // 64-key-row chunk of dS and K; both add their partial dQ into dq_acc).
    this.dqSplit = tileM === 128 ? 'M' : headDim >= 128 ? 'N' : 'K';
    this.dqGemm = new WgmmaBlockGemmSs({
      dtype,
      tileM,
      tileN: headDim,
      tileK: FMHA_BWD_SLAB,
      aMajor: 'MN',
      bMajor: 'MN',
      ...(this.dqSplit === 'N' ? { warpgroupsN: 2 } : this.dqSplit === 'K' ? { warpgroupsK: 2 } : {}),
    });
    this.consumerThreads = this.sT.threads;
    if (this.dqGemm.threads !== this.consumerThreads) bad('dQ split', 'must use both consumer warpgroups', this.dqGemm.threads);
    this.threads = this.consumerThreads + 128;
    checkSetMaxNRegBudget(this.threads, pr, cr, (rule, found) => bad('registers', rule, found));
    this.slabsQK = headDim / FMHA_BWD_SLAB;
    this.slabsV = headDimV / FMHA_BWD_SLAB;
    this.chunks = tileN / 64;
    this.kBytes = tileN * headDim * 2;
    this.vBytes = tileN * headDimV * 2;
    this.qStageBytes = tileM * headDim * 2;
    this.doStageBytes = tileM * headDimV * 2;
    this.dsBytes = tileN * tileM * 2;
    const k = 0;
    const v = k + this.kBytes;
    const q = v + this.vBytes;
    const dO = q + stages * this.qStageBytes;
    const ds = dO + stages * this.doStageBytes;
    // Per stage: LSE·log2 e and D of the tile's query rows (fp32), staged by the producer warp.
    this.rowStageBytes = tileM * 4;
    const lse = ds + this.dsBytes;
    // Deterministic dQ with a key split: the second warpgroup's partial goes through shared memory.
    const dqStage = lse + stages * 2 * this.rowStageBytes;
    // dQ tiles staged for the TMA bulk store / reduce-add (atomic with a key split: one per replica).
    this.dqStageBytes = this.wide ? 0 : (policy.dqMode === 'atomic' && this.dqSplit === 'K' ? 2 : 1) * tileM * headDim * 4;
    const bars = dqStage + this.dqStageBytes;
    this.offsets = Object.freeze({ k, v, q, dO, ds, lse, dqStage, bars });
    this.usedBytes = bars + 8 * (2 + 2 * stages);
    this.sharedBytes = this.usedBytes + 1024;
    if (this.sharedBytes > 232448) bad('shared memory', 'must fit the 227 KiB an sm_90 block may use', this.sharedBytes);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaBwdWsArgs): void {
    const P = this.policy;
    const S = P.stages;
    const O = this.offsets;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });
    b.comment(
      `dynamic shared memory (1024-aligned): K ${this.kBytes} B, V ${this.vBytes} B, ${S}× Q ` +
        `${this.qStageBytes} B, ${S}× dO ${this.doStageBytes} B, dSᵀ ${this.dsBytes} B, barriers`,
    );
    const { smem, smemAddr } = declareAlignedDynamicShared(b, target, FMHA_BWD_DYNAMIC_SMEM);
    const bars = b.let('bars', pointer(uint64), cast(add(smem, O.bars), pointer(uint64)));
    const kvFull = bars;
    const kvEmpty = add(bars, 1);
    const qFull = (s: Expr | number): Expr => add(bars, add(2, s));
    const qEmpty = (s: Expr | number): Expr => add(bars, add(2 + S, s));
    // The empty barriers count consumer threads: each thread's arrive releases its own reads of
    // the stage (the LSE/D rows are read with ordinary loads), so no lane's read can race the
    // producer's next write into it.
    const consumers = this.consumerThreads;
    b.if(eq(tid, 0), (t) => {
      t.expr(mbarrierInit(target, kvFull, 1));
      t.expr(mbarrierInit(target, kvEmpty, consumers));
      t.forRange({ name: 's', to: S, unroll: true }, (l, s) => {
        // The TMA lane's expect_tx plus one arrival per producer-warp lane once its LSE/D rows are staged.
        l.expr(mbarrierInit(target, qFull(s), 1 + 32));
        l.expr(mbarrierInit(target, qEmpty(s), consumers));
      });
      t.expr(fenceMbarrierInit(target));
    });
    b.push(target.syncThreads());

    // This block's key tiles kt = first + round·step < count (a runtime step: counted by rounds).
    const keyRounds = b.let(
      'key_rounds',
      int32,
      maxOf(div(add(sub(args.keyTiles.count, args.keyTiles.first), sub(args.keyTiles.step, 1)), args.keyTiles.step), 0),
    );
    const ctx: FmhaBwdWsContext = { pipeline: this, target, args, smem, smemAddr, kvFull, kvEmpty, qFull, qEmpty, tid, keyRounds };
    b.if(
      ge(tid, this.consumerThreads),
      (prod) => emitFmhaBwdWsProducer(prod, ctx),
      (cons) => emitFmhaBwdWsConsumers(cons, ctx),
    );
  }
}
