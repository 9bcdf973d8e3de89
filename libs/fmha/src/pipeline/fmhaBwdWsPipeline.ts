import {
  add,
  declareAlignedDynamicShared,
  and,
  bitAnd,
  bitXor,
  bool,
  cast,
  div,
  eq,
  exp2Approx,
  fenceMbarrierInit,
  fenceProxyAsyncShared,
  float32,
  ge,
  gt,
  index,
  infinity,
  int32,
  lit,
  lt,
  maxOf,
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierWaitParity,
  mul,
  namedBarrierSync,
  neg,
  or,
  packFloat2,
  pointer,
  prefetchTensorMap,
  bulkCommitGroup,
  bulkReduceAddF32,
  bulkStoreF32,
  bulkWaitGroup,
  reduceAddF32,
  minOf,
  select,
  setMaxNReg,
  sub,
  tmaLoad,
  uint8,
  uint32,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockGemmPolicyError, makeWgmmaSmemLayout, WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import { emitCalculateOffset } from '@tilekit/layout';
import { BlockEmitter, clearTile, makeDistributedTensor, makeTileWindow, storeTile, sweepTile, type TensorView } from '@tilekit/tile';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';

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
}

export const FMHA_BWD_DYNAMIC_SMEM = 'tk_fmha_bwd_smem';

const SLAB = 64;
const SLAB_BYTES = 64 * 128;

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
    this.sT = new WgmmaBlockGemmSs({ dtype, tileM: tileN, tileN: tileM, tileK: SLAB, ...(this.wide ? { warpgroupsK: 2 } : {}) });
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
      tileK: SLAB,
      aMajor: 'MN',
      bMajor: 'MN',
      ...(this.dqSplit === 'N' ? { warpgroupsN: 2 } : this.dqSplit === 'K' ? { warpgroupsK: 2 } : {}),
    });
    this.consumerThreads = this.sT.threads;
    if (this.dqGemm.threads !== this.consumerThreads) bad('dQ split', 'must use both consumer warpgroups', this.dqGemm.threads);
    this.threads = this.consumerThreads + 128;
    if (pr * 128 + cr * this.consumerThreads > 65536)
      bad('registers', 'producer + consumer budgets must fit the 64K-register file', `${pr}·128 + ${cr}·${this.consumerThreads}`);
    this.slabsQK = headDim / SLAB;
    this.slabsV = headDimV / SLAB;
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
      `dynamic shared memory (1024-aligned): K ${this.kBytes} B, V ${this.vBytes} B, ${S}× Q ${this.qStageBytes} B, ${S}× dO ${this.doStageBytes} B, dSᵀ ${this.dsBytes} B, barriers`,
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
    // The query tiles of one key tile, for every query head of the group: iterations it = g·nq + t.
    const qRange = (bb: BlockBuilder, j0: Expr): { start: Expr; iters: Expr; nq: Expr } => {
      const r = args.mask.getTileRangeAlongY(j0, P.tileN, P.tileM);
      const start = bb.let('q_start', int32, r.start);
      const nq = bb.let('q_tiles', int32, div(sub(r.end, start), P.tileM));
      return { start, nq, iters: bb.let('q_iters', int32, mul(nq, args.headRatio)) };
    };
    const stageOf = (bb: BlockBuilder, count: Expr, n: number): { s: Expr; parity: Expr } => ({
      s: bb.let('s', int32, n === 2 ? bitAnd(count, 1) : sub(count, mul(div(count, n), n))),
      parity: bb.let('parity', uint32, cast(bitAnd(div(count, n), 1), uint32)),
    });
    const iterOf = (bb: BlockBuilder, it: Expr, nq: Expr, start: Expr): { head: Expr; i0: Expr } => {
      const g = bb.let('g', int32, div(it, nq));
      return {
        head: bb.let('q_head', int32, add(args.firstHead, g)),
        i0: bb.let('i0', int32, add(start, mul(sub(it, mul(g, nq)), P.tileM))),
      };
    };

    b.if(
      ge(tid, this.consumerThreads),
      (prod) => {
        prod.comment(`producer warpgroup: registers down to ${P.producerRegisters}; one thread issues every TMA load`);
        prod.expr(setMaxNReg(target, 'dec', P.producerRegisters));
        prod.if(lt(tid, this.consumerThreads + 32), (one) => {
          prod.comment('the first producer warp: lane 0 issues every TMA load; all lanes stage LSE·log2 e and D rows in shared memory');
          const lane = one.let('lane', int32, sub(tid, this.consumerThreads));
          const leader = one.let('tma_lane', bool, eq(lane, 0));
          one.if(leader, (x) => {
            for (const map of [args.qMap, args.kMap, args.vMap, args.doMap]) x.expr(prefetchTensorMap(target, map));
          });
          const done = one.declare('q_loads', int32, 0, { storage: 'mutable' });
          const tiles = one.declare('kv_round', int32, 0, { storage: 'mutable' });
          one.forRange({ name: 'round', to: keyRounds }, (l, round) => {
            const kt = l.let('kt', int32, add(args.keyTiles.first, mul(round, args.keyTiles.step)));
            const j0 = l.let('j0', int32, mul(kt, P.tileN));
            l.if(leader, (x) => {
              x.comment('K and V of this key tile (after the consumers released the previous ones)');
              x.expr(mbarrierWaitParity(target, kvEmpty, bitXor(cast(bitAnd(tiles, 1), uint32), 1)));
              x.expr(mbarrierArriveExpectTx(target, kvFull, this.kBytes + this.vBytes));
              for (let c = 0; c < this.chunks; c++) {
                for (let sl = 0; sl < this.slabsQK; sl++)
                  x.expr(
                    tmaLoad(target, {
                      dst: add(smem, O.k + (c * this.slabsQK + sl) * SLAB_BYTES),
                      map: args.kMap,
                      bar: kvFull,
                      coords: args.kvCoords(sl * SLAB, add(j0, 64 * c)),
                    }),
                  );
                for (let sl = 0; sl < this.slabsV; sl++)
                  x.expr(
                    tmaLoad(target, {
                      dst: add(smem, O.v + (c * this.slabsV + sl) * SLAB_BYTES),
                      map: args.vMap,
                      bar: kvFull,
                      coords: args.kvCoords(sl * SLAB, add(j0, 64 * c)),
                    }),
                  );
              }
            });
            l.assign(tiles, add(tiles, 1));
            const { start, nq, iters } = qRange(l, j0);
            l.forRange({ name: 'it', to: iters }, (li, it) => {
              const { s, parity } = stageOf(li, done, S);
              const { head, i0 } = iterOf(li, it, nq, start);
              li.expr(mbarrierWaitParity(target, qEmpty(s), bitXor(parity, 1)));
              li.if(leader, (x) => {
                x.expr(mbarrierArriveExpectTx(target, qFull(s), this.qStageBytes + this.doStageBytes));
                const qStage = x.let('q_stage', pointer(uint8), add(smem, add(O.q, mul(s, this.qStageBytes))));
                const doStage = x.let('do_stage', pointer(uint8), add(smem, add(O.dO, mul(s, this.doStageBytes))));
                for (let c = 0; c < this.slabsQK; c++)
                  x.expr(
                    tmaLoad(target, {
                      dst: add(qStage, c * P.tileM * 128),
                      map: args.qMap,
                      bar: qFull(s),
                      coords: args.qCoords(c * SLAB, i0, head),
                    }),
                  );
                for (let c = 0; c < this.slabsV; c++)
                  x.expr(
                    tmaLoad(target, {
                      dst: add(doStage, c * P.tileM * 128),
                      map: args.doMap,
                      bar: qFull(s),
                      coords: args.qCoords(c * SLAB, i0, head),
                    }),
                  );
              });
              // LSE (as LSE·log2 e; +∞ for a fully masked row, so its P is 0) and D of the tile's
              // rows, loaded here so their global latency hides behind the ring.
              const lseRow = args.lseRow(li, head);
              const dRow = args.dRow(li, head);
              const lseStage = li.let(
                'lse_stage',
                pointer(float32),
                cast(add(smem, add(O.lse, mul(s, 2 * this.rowStageBytes))), pointer(float32)),
              );
              for (let k = 0; k < P.tileM / 32; k++) {
                const r = li.let('stage_r', int32, add(lane, 32 * k));
                const row = li.let('stage_row', int32, add(i0, r));
                const inSeq = li.let('in_seq', bool, lt(row, args.seqlenQ));
                const lse = li.let('lse', float32, select(inSeq, index(lseRow, row), lit(0, float32)));
                li.assign(
                  index(lseStage, r),
                  select(eq(lse, infinity(float32, { negative: true })), infinity(float32), mul(lse, lit(Math.LOG2E, float32))),
                );
                li.assign(index(lseStage, add(r, P.tileM)), select(inSeq, index(dRow, row), lit(0, float32)));
              }
              li.expr(mbarrierArrive(target, qFull(s)));
              li.assign(done, add(done, 1));
            });
          });
        });
      },
      (cons) =>
        this.#emitConsumers(cons, target, args, {
          smem,
          smemAddr,
          kvFull,
          kvEmpty,
          qFull,
          qEmpty,
          tid,
          keyRounds,
          qRange,
          stageOf,
          iterOf,
        }),
    );
  }

  #emitConsumers(
    cons: BlockBuilder,
    target: Target,
    args: FmhaBwdWsArgs,
    ctx: {
      smem: Expr;
      smemAddr: Expr;
      kvFull: Expr;
      kvEmpty: Expr;
      qFull: (s: Expr | number) => Expr;
      qEmpty: (s: Expr | number) => Expr;
      tid: Expr;
      keyRounds: Expr;
      qRange: (bb: BlockBuilder, j0: Expr) => { start: Expr; iters: Expr; nq: Expr };
      stageOf: (bb: BlockBuilder, count: Expr, n: number) => { s: Expr; parity: Expr };
      iterOf: (bb: BlockBuilder, it: Expr, nq: Expr, start: Expr) => { head: Expr; i0: Expr };
    },
  ): void {
    const P = this.policy;
    const O = this.offsets;
    const { smem, smemAddr, tid, keyRounds } = ctx;
    cons.comment(`2 consumer warpgroups of 64 key rows: registers up to ${P.consumerRegisters}`);
    cons.expr(setMaxNReg(target, 'inc', P.consumerRegisters));
    const index0 = { symbols: args.symbols };
    const block = new BlockEmitter(cons, target, { numThreads: this.consumerThreads, index: index0 });
    const sAcc = makeDistributedTensor(block, 'st_acc', this.sT.cEncoding, float32);
    const dpAcc = makeDistributedTensor(block, 'dpt_acc', this.dpT.cEncoding, float32);
    const dvAcc = makeDistributedTensor(block, 'dv_acc', this.dvGemm.cEncoding, float32);
    const dkAcc = makeDistributedTensor(block, 'dk_acc', this.dkGemm.cEncoding, float32);
    const dqAcc = makeDistributedTensor(block, 'dq_acc', this.dqGemm.cEncoding, float32);
    const pFrag = block.registers('p_frag', uint32, this.dvGemm.aRegisters);
    const dsFrag = block.registers('ds_frag', uint32, this.dkGemm.aRegisters);
    const wg = cons.let('warpgroup', int32, div(tid, 128));
    const done = cons.declare('q_loads', int32, 0, { storage: 'mutable' });
    const tiles = cons.declare('kv_round', int32, 0, { storage: 'mutable' });
    // The dSᵀ tile in shared memory: per 64-key-row chunk (one per consumer warpgroup) the M-major
    // (query-contiguous) A operand of dQ = dS·K; element (query q, key row r) at the layout's offset.
    const dsLayout = makeWgmmaSmemLayout({ swizzle: '128B', dtype: P.dtype, mn: P.tileM, k: 64, major: 'MN' });
    const dsChunkBytes = dsLayout.bytes;
    const dsPairs = cons.let('ds_pairs', pointer(uint32), cast(add(smem, O.ds), pointer(uint32)));
    const scaleLog2 = args.scaleLog2;
    cons.forRange({ name: 'round', to: keyRounds }, (l, round) => {
      const kt = l.let('kt', int32, add(args.keyTiles.first, mul(round, args.keyTiles.step)));
      const j0 = l.let('j0', int32, mul(kt, P.tileN));
      const kvParity = l.let('kv_parity', uint32, cast(bitAnd(tiles, 1), uint32));
      l.assign(tiles, add(tiles, 1));
      l.expr(mbarrierWaitParity(target, ctx.kvFull, kvParity));
      const { start, nq, iters } = ctx.qRange(l, j0);
      // This warpgroup's 64 key rows (at head dim 256 both share the block's only chunk).
      const chunkOf = this.wide ? lit(0, int32) : wg;
      const kChunk = l.let('k_chunk', uint32, add(smemAddr, cast(add(O.k, mul(chunkOf, this.slabsQK * SLAB_BYTES)), uint32)));
      const vChunk = l.let('v_chunk', uint32, add(smemAddr, cast(add(O.v, mul(chunkOf, this.slabsV * SLAB_BYTES)), uint32)));
      l.forRange({ name: 'it', to: iters }, (li, it) => {
        const { s, parity } = ctx.stageOf(li, done, P.stages);
        li.assign(done, add(done, 1));
        const { head, i0 } = ctx.iterOf(li, it, nq, start);
        const qTile = li.let('q_tile', uint32, add(smemAddr, cast(add(O.q, mul(s, this.qStageBytes)), uint32)));
        const doTile = li.let('do_tile', uint32, add(smemAddr, cast(add(O.dO, mul(s, this.doStageBytes)), uint32)));
        const lseStage = li.let(
          'lse_stage',
          pointer(float32),
          cast(add(smem, add(O.lse, mul(s, 2 * this.rowStageBytes))), pointer(float32)),
        );
        li.expr(mbarrierWaitParity(target, ctx.qFull(s), parity));
        li.comment('Sᵀ = K·Qᵀ (this warpgroup: its 64 key rows)');
        for (let c = 0; c < this.slabsQK; c++)
          this.sT.emitMma(li, target, sAcc, {
            aTile: add(kChunk, c * SLAB_BYTES),
            bTile: add(qTile, c * P.tileM * 128),
            warpgroup: lit(0, int32),
            accumulate: lit(c === 0 ? 0 : 1, int32),
          });
        this.sT.emitWait(li, target, sAcc, 0);
        const inner = new BlockEmitter(li, target, { numThreads: this.consumerThreads, index: index0 }, block);
        li.comment('the mask on edge tiles; query rows past seqlenQ (the next sequence in group mode) too');
        li.if(or(args.mask.isEdgeTile(i0, j0, P.tileM, P.tileN), gt(add(i0, P.tileM), args.seqlenQ)), (mb) =>
          new BlockEmitter(mb, target, { numThreads: this.consumerThreads, index: index0 }, block).threads((t) =>
            sweepTile(t, sAcc, (e) =>
              e.b.if(args.mask.isMaskedNonNegative(add(i0, e.x[1]!), add(j0, e.x[0]!)), (z) =>
                z.assign(e.value, infinity(float32, { negative: true })),
              ),
            ),
          ),
        );
        inner.threads((t) => {
          t.b.comment('Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e); a fully masked row (LSE = −∞) gives 0');
          sweepTile(t, sAcc, (e) => {
            e.b.assign(e.value, exp2Approx(target, add(mul(e.value, scaleLog2), neg(index(lseStage, e.x[1]!)))));
          });
        });
        const firstIt = li.let('acc_kv', int32, cast(gt(it, 0), int32));
        inner.threads((t) => {
          for (let r = 0; r < this.dvGemm.aRegisters; r++)
            t.b.assign(pFrag.at(t, r), packFloat2(target, P.dtype, sAcc.at(t, 2 * r), sAcc.at(t, 2 * r + 1)));
        });
        li.comment('dV += Pᵀ·dO and dPᵀ = V·dOᵀ (issued after the softmax: the mask then has registers to spare)');
        this.dvGemm.emitMma(li, target, dvAcc, pFrag, { bTile: doTile, accumulate: firstIt, warpgroup: wg });
        for (let c = 0; c < this.slabsV; c++)
          this.dpT.emitMma(li, target, dpAcc, {
            aTile: add(vChunk, c * SLAB_BYTES),
            bTile: add(doTile, c * P.tileM * 128),
            warpgroup: lit(0, int32),
            accumulate: lit(c === 0 ? 0 : 1, int32),
          });
        this.dpT.emitWait(li, target, dpAcc, 0);
        this.dvGemm.emitWait(li, target, dvAcc, 0, pFrag);
        inner.threads((t) => {
          t.b.comment('dSᵀ = scale · Pᵀ ∘ (dPᵀ − D), packed to fp16/bf16 pairs');
          sweepTile(t, dpAcc, (e) => {
            e.b.assign(e.value, mul(mul(sAcc.at(t, e.d), sub(e.value, index(lseStage, add(e.x[1]!, P.tileM)))), args.scale));
          });
          for (let r = 0; r < this.dkGemm.aRegisters; r++)
            t.b.assign(dsFrag.at(t, r), packFloat2(target, P.dtype, dpAcc.at(t, 2 * r), dpAcc.at(t, 2 * r + 1)));
        });
        li.comment('dSᵀ pairs to shared memory once both warpgroups finished the previous dQ');
        li.expr(namedBarrierSync(target, 1, this.consumerThreads));
        const storeDs = (bb: BlockBuilder): void =>
          new BlockEmitter(bb, target, { numThreads: this.consumerThreads, index: index0 }, block).threads((t) =>
            sweepTile(t, dpAcc, (e) => {
              // Elements 2r, 2r + 1 are adjacent queries of one key row: one 32-bit store of packed register r.
              if (e.d % 2 !== 0) return;
              const row = e.b.let('ds_r', int32, bitAnd(e.x[0]!, 63));
              const chunk = e.b.let('ds_c', int32, div(e.x[0]!, 64));
              const { offset } = emitCalculateOffset(e.b, dsLayout.descriptor, [e.x[1]!, row], block.indexEmitter);
              e.b.assign(index(dsPairs, div(add(mul(chunk, dsChunkBytes / 2), offset), 2)), dsFrag.at(t, e.d / 2));
            }),
          );
        // At head dim 256 both warpgroups hold the same dSᵀ: the first one writes it.
        if (this.wide) li.if(eq(wg, 0), storeDs);
        else storeDs(li);
        li.comment('dK += dSᵀ·Q, then dQ = dS·K (dS M-major from shared memory, K N-major)');
        this.dkGemm.emitMma(li, target, dkAcc, dsFrag, { bTile: qTile, accumulate: firstIt, warpgroup: wg });
        // Head dim 256: dK done (dSᵀ registers free) before dQ's accumulator comes alive.
        if (this.wide) this.dkGemm.emitWait(li, target, dkAcc, 0, dsFrag);
        li.expr(fenceProxyAsyncShared(target));
        li.expr(namedBarrierSync(target, 2, this.consumerThreads));
        if (this.dqSplit === 'K') {
          this.dqGemm.emitMma(li, target, dqAcc, {
            aTile: li.let('ds_chunk', uint32, add(smemAddr, cast(add(O.ds, mul(wg, dsChunkBytes)), uint32))),
            bTile: kChunk,
            warpgroup: wg,
            accumulate: lit(0, int32),
          });
        } else {
          for (let c = 0; c < this.chunks; c++) {
            this.dqGemm.emitMma(li, target, dqAcc, {
              aTile: add(smemAddr, O.ds + c * dsChunkBytes),
              bTile: add(smemAddr, O.k + c * this.slabsQK * SLAB_BYTES),
              warpgroup: wg,
              accumulate: lit(c === 0 ? 0 : 1, int32),
            });
          }
        }
        this.dqGemm.emitWait(li, target, dqAcc, 0);
        if (!this.wide) this.dkGemm.emitWait(li, target, dkAcc, 0, dsFrag);
        li.expr(mbarrierArrive(target, ctx.qEmpty(s)));
        const dqRow = args.dqAcc(li, head);
        if (this.wide) {
          li.comment('head dim 256: each warpgroup adds its half of the dQ columns with red.global');
          inner.threads((t) =>
            sweepTile(t, dqAcc, (e) => {
              const row = e.b.let('dq_row', int32, add(i0, e.x[0]!));
              e.b.if(lt(row, args.seqlenQ), (st) => st.expr(reduceAddF32(target, add(dqRow, add(mul(row, P.headDim), e.x[1]!)), e.value)));
            }),
          );
          return;
        }
        // dQ into dq_acc by the TMA unit: the tile (row-major fp32) goes to shared memory, then an
        // issuing thread moves the rows inside the sequence with one bulk operation. atomic: a
        // reduce-add per key-split replica (two buffers with a key split). split (deterministic):
        // one buffer (a key split's second partial added in shared memory first, in a fixed
        // order), stored by the block's first key tile and reduce-added by later ones, each key
        // tile's operations complete before the next tile's start (see the end of the round).
        const atomic = P.dqMode === 'atomic';
        const replicas = atomic && this.dqSplit === 'K' ? 2 : 1;
        const tileBytes = P.tileM * P.headDim * 4;
        const issuer = li.let('dq_issuer', bool, replicas === 2 ? eq(bitAnd(tid, 127), 0) : eq(tid, 0));
        const buffer = li.let(
          'dq_tile',
          pointer(float32),
          cast(add(smem, replicas === 2 ? add(O.dqStage, mul(wg, tileBytes)) : O.dqStage), pointer(float32)),
        );
        const at = (x: readonly Expr[]): Expr => index(buffer, add(mul(x[0]!, P.headDim), x[1]!));
        li.if(issuer, (x) => x.expr(bulkWaitGroup(target, 0, { read: true })));
        li.expr(namedBarrierSync(target, 3, this.consumerThreads));
        if (!atomic && this.dqSplit === 'K') {
          li.if(eq(wg, 1), (w1) =>
            new BlockEmitter(w1, target, { numThreads: this.consumerThreads, index: index0 }, block).threads((t) =>
              sweepTile(t, dqAcc, (e) => e.b.assign(at(e.x), e.value)),
            ),
          );
          li.expr(namedBarrierSync(target, 4, this.consumerThreads));
          li.if(eq(wg, 0), (w0) =>
            new BlockEmitter(w0, target, { numThreads: this.consumerThreads, index: index0 }, block).threads((t) =>
              sweepTile(t, dqAcc, (e) => e.b.assign(at(e.x), add(at(e.x), e.value))),
            ),
          );
        } else {
          inner.threads((t) => sweepTile(t, dqAcc, (e) => e.b.assign(at(e.x), e.value)));
        }
        li.expr(fenceProxyAsyncShared(target));
        li.expr(namedBarrierSync(target, 5, this.consumerThreads));
        const rows = li.let('dq_rows', int32, minOf(sub(args.seqlenQ, i0), P.tileM));
        li.if(and(issuer, gt(rows, 0)), (x) => {
          const dst = x.let('dq_dst', pointer(float32), add(dqRow, mul(i0, P.headDim)));
          const bytes = mul(rows, P.headDim * 4);
          if (atomic) x.expr(bulkReduceAddF32(target, dst, buffer, bytes));
          else
            x.if(
              eq(round, 0),
              (st) => st.expr(bulkStoreF32(target, dst, buffer, bytes)),
              (ad) => ad.expr(bulkReduceAddF32(target, dst, buffer, bytes)),
            );
          x.expr(bulkCommitGroup(target));
        });
      });
      if (P.dqMode === 'split') {
        l.comment("deterministic dQ: this key tile's stores and adds land before the next tile's adds start");
        l.if(eq(tid, 0), (x) => x.expr(bulkWaitGroup(target, 0)));
      }
      l.expr(mbarrierArrive(target, ctx.kvEmpty));
      l.comment('dK and dV of this key tile (zero when no query row sees it), predicated on rows < seqlenK');
      l.if(eq(iters, 0), (z) =>
        new BlockEmitter(z, target, { numThreads: this.consumerThreads, index: index0 }, block).threads((t) => {
          clearTile(t, dkAcc);
          clearTile(t, dvAcc);
        }),
      );
      const inner = new BlockEmitter(l, target, { numThreads: this.consumerThreads, index: index0 }, block);
      const dkWindow = makeTileWindow(inner, {
        view: args.dk,
        lengths: [P.tileN, P.headDim],
        origin: [j0, 0],
        encoding: this.dkGemm.cEncoding,
        originAlignment: [P.tileN, P.headDim],
      });
      const dvWindow = makeTileWindow(inner, {
        view: args.dv,
        lengths: [P.tileN, P.headDimV],
        origin: [j0, 0],
        encoding: this.dvGemm.cEncoding,
        originAlignment: [P.tileN, P.headDimV],
      });
      inner.threads((t) => {
        storeTile(t, dkWindow, dkAcc);
        storeTile(t, dvWindow, dvAcc);
      });
    });
    cons.comment('the last bulk operations must finish reading shared memory (and land) before the block exits');
    if (!this.wide)
      cons.if(P.dqMode === 'atomic' && this.dqSplit === 'K' ? eq(bitAnd(tid, 127), 0) : eq(tid, 0), (x) =>
        x.expr(bulkWaitGroup(target, 0)),
      );
  }
}
