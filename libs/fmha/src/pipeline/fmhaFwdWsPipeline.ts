import {
  add,
  declareAlignedDynamicShared,
  bitAnd,
  bitXor,
  bool,
  call,
  cast,
  div,
  eq,
  fenceMbarrierInit,
  float32,
  ge,
  gt,
  infinity,
  int32,
  lit,
  mbarrierArriveWarp,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierWaitParity,
  mul,
  ne,
  packFloat2,
  pointer,
  prefetchTensorMap,
  not,
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
import { BlockGemmPolicyError, WgmmaBlockGemmRs, WgmmaBlockGemmSs } from '@tilekit/gemm';
import { BlockEmitter, clearTile, makeDistributedTensor, sweepTile, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import { DenseKeyTileWalk, type FmhaFwdKeyTileWalk } from './fmhaFwdKeyTiles.ts';
import { FMHA_PV_VOTE_SHARED_BYTES, FmhaFwdPvSkipVote } from './fmhaFwdPvSkipVote.ts';
import { emitFmhaFwdEpilogue } from './fmhaFwdEpilogue.ts';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';

/** Policy of {@link FmhaFwdWsPipeline}: tile shape, ring depth and register split. */
export interface FmhaFwdWsPolicy {
  /** Q/K/V/O element type (fp32 accumulation and softmax). */
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K (the first GEMM's K): 32 … 256, a multiple of 16. */
  readonly headDim: number;
  /** Head dim of V and O (the second GEMM's N): a multiple of 16 in [16, 256]. */
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
   * Emit the PV-skip vote (SpargeAttn paper §3.4; default false): per visited key tile but the last,
   * a group of rows skips P·V when max over its rows of (m_loc − m_prev) + threshold ≤ 0; the mode
   * (none, warp, block) and threshold are runtime arguments ({@link FmhaFwdPvSkipArgs}).
   */
  readonly pvSkip?: boolean;
  /** Shared memory reserved for the key-tile walk ({@link FmhaFwdKeyTileWalk.sharedBytes}; default 0). */
  readonly keyTileSharedBytes?: number;
  /**
   * `int8`: Q and K arrive as int8 with one dequantization scale per query tile and per key tile
   * (SageAttention's per-block quantization, Sparge's int8 path); S = Q8·K8ᵀ is an s8 wgmma with an
   * int32 accumulator over the whole head dim (64 or 128, one swizzle row), converted to float and
   * scaled by q_scale·k_scale with the softmax scale. Default: Q and K have `dtype`.
   */
  readonly qkDtype?: 'int8';
  /**
   * Intra-warpgroup overlap (FlashAttention-3's): P·V of key tile i − 1 is issued right after S of tile
   * i and runs on the tensor cores while the warpgroup does tile i's mask and softmax; O is rescaled
   * and P packed once it completes. Default false (one tile at a time).
   */
  readonly overlapSoftmax?: boolean;
}

/** The per-tile dequantization scales of the int8 Q·Kᵀ (policy `qkDtype: 'int8'`). */
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
  qCoords(d0: number, row: Expr): readonly Expr[];
  /** The same for K and V rows (V's d0 runs over headDimV). */
  kCoords(d0: number, row: Expr): readonly Expr[];
  vCoords(d0: number, row: Expr): readonly Expr[];
  /** The key tiles to visit (default: the dense walk over the mask's range, or its split). */
  readonly keyTiles?: FmhaFwdKeyTileWalk;
  /** The PV-skip vote's runtime values (required with the policy's `pvSkip`). */
  readonly pvSkip?: FmhaFwdPvSkipArgs;
  /** The dequantization scales (required with the policy's `qkDtype: 'int8'`; Q/K maps then carry int8 boxes [headDim, rows]). */
  readonly int8Scales?: FmhaFwdInt8Scales;
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
 */
export class FmhaFwdWsPipeline {
  readonly policy: FmhaFwdWsPolicy;
  readonly qk: WgmmaBlockGemmSs;
  readonly pv: WgmmaBlockGemmRs;
  readonly consumerThreads: number;
  readonly threads: number;
  /** 64-element slabs of the QK head dim and of V's. */
  readonly slabsQK: number;
  readonly slabsV: number;
  readonly qBytes: number;
  readonly kStageBytes: number;
  readonly vStageBytes: number;
  readonly kOffset: number;
  readonly vOffset: number;
  readonly barrierOffset: number;
  /** Where the key-tile walk's shared memory starts (after the barriers). */
  readonly keyTileOffset: number;
  /** Where the PV-skip vote's slots start (after the walk's; used with `pvSkip`). */
  readonly pvVoteOffset: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request (used + 1024 bytes of alignment slack). */
  readonly sharedBytes: number;

  constructor(policy: FmhaFwdWsPolicy) {
    const { dtype, headDim, headDimV, tileM, tileN, stages, producerRegisters: pr, consumerRegisters: cr } = policy;
    const bad = (what: string, rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError(`FmhaFwdWsPipeline ${what}`, rule, String(found));
    };
    if (!Number.isSafeInteger(headDim) || headDim < 16 || headDim > 256 || headDim % 16 !== 0)
      bad('headDim', 'must be a multiple of 16 in [16, 256]', headDim);
    if (!Number.isSafeInteger(headDimV) || headDimV < 16 || headDimV > 256 || headDimV % 16 !== 0)
      bad('headDimV', 'must be a multiple of 16 in [16, 256]', headDimV);
    if (![2, 3, 4].includes(stages)) bad('stages', 'must be 2, 3 or 4', stages);
    for (const [what, r] of [
      ['producerRegisters', pr],
      ['consumerRegisters', cr],
    ] as const) {
      if (!Number.isSafeInteger(r) || r < 24 || r > 256 || r % 8 !== 0) bad(what, 'must be a multiple of 8 in [24, 256]', r);
    }
    this.policy = Object.freeze({ ...policy });
    const int8 = policy.qkDtype === 'int8';
    if (int8 && headDim !== 64 && headDim !== 128) bad('headDim', 'must be 64 or 128 with int8 Q·Kᵀ (one swizzle row of int8)', headDim);
    if (policy.qkDtype !== undefined && !int8) bad('qkDtype', 'must be int8 or left out', policy.qkDtype);
    this.qk = new WgmmaBlockGemmSs({ dtype: int8 ? 'int8' : dtype, tileM, tileN, tileK: int8 ? headDim : SLAB });
    this.pv = new WgmmaBlockGemmRs({ dtype, tileM, tileN: headDimV, tileK: tileN, bMajor: 'MN' });
    this.consumerThreads = this.qk.threads;
    this.threads = this.consumerThreads + 128;
    if (pr * 128 + cr * this.consumerThreads > 65536)
      bad('registers', 'producer + consumer budgets must fit the 64K-register file', `${pr}·128 + ${cr}·${this.consumerThreads}`);
    this.slabsQK = int8 ? 1 : Math.ceil(headDim / SLAB);
    this.slabsV = Math.ceil(headDimV / SLAB);
    this.qBytes = this.slabsQK * this.qk.aTileBytes;
    this.kStageBytes = this.slabsQK * this.qk.bTileBytes;
    this.vStageBytes = this.pv.bTileBytes;
    if (this.vStageBytes !== this.slabsV * tileN * 128) bad('V layout', 'must be whole 64-element slabs of tileN rows', this.vStageBytes);
    this.kOffset = this.qBytes;
    this.vOffset = this.kOffset + stages * this.kStageBytes;
    this.barrierOffset = this.vOffset + stages * this.vStageBytes;
    this.keyTileOffset = this.barrierOffset + 8 * (1 + 4 * stages);
    const walkBytes = policy.keyTileSharedBytes ?? 0;
    if (!Number.isSafeInteger(walkBytes) || walkBytes < 0) bad('keyTileSharedBytes', 'must be an integer ≥ 0', walkBytes);
    this.pvVoteOffset = this.keyTileOffset + Math.ceil(walkBytes / 16) * 16;
    if (policy.pvSkip === true && stages !== 2)
      bad('stages', 'must be 2 with pvSkip (the vote rotates three rounds of slots and barriers)', stages);
    this.usedBytes = policy.pvSkip === true ? this.pvVoteOffset + FMHA_PV_VOTE_SHARED_BYTES : this.keyTileOffset + walkBytes;
    this.sharedBytes = this.usedBytes + 1024;
    if (this.sharedBytes > 232448) bad('shared memory', 'must fit the 227 KiB an sm_90 block may use', this.sharedBytes);
  }

  /** Query tiles of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number {
    return Math.ceil(seqlenQ / this.policy.tileM);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdWsArgs): void {
    const P = this.policy;
    const S = P.stages;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(
      `dynamic shared memory, aligned up to 1024 bytes: Q (${this.qBytes} B), ${S} K stages (${this.kStageBytes} B), ${S} V stages (${this.vStageBytes} B), barriers`,
    );
    const { smem, smemAddr } = declareAlignedDynamicShared(b, target, FMHA_DYNAMIC_SMEM);
    const bars = b.let('bars', pointer(uint64), cast(add(smem, this.barrierOffset), pointer(uint64)));
    const qFull = bars;
    const kFull = (s: Expr | number): Expr => add(bars, add(1, s));
    const kEmpty = (s: Expr | number): Expr => add(bars, add(1 + S, s));
    const vFull = (s: Expr | number): Expr => add(bars, add(1 + 2 * S, s));
    const vEmpty = (s: Expr | number): Expr => add(bars, add(1 + 3 * S, s));
    const consumerWarps = this.consumerThreads / 32;

    b.if(eq(tid, 0), (t) => {
      t.expr(mbarrierInit(target, qFull, 1));
      t.forRange({ name: 's', to: S, unroll: true }, (l, s) => {
        l.expr(mbarrierInit(target, kFull(s), 1));
        l.expr(mbarrierInit(target, kEmpty(s), consumerWarps));
        l.expr(mbarrierInit(target, vFull(s), 1));
        l.expr(mbarrierInit(target, vEmpty(s), consumerWarps));
      });
      t.expr(fenceMbarrierInit(target));
    });
    const walk = args.keyTiles ?? new DenseKeyTileWalk(args.mask, args.split);
    if (walk.sharedBytes > (P.keyTileSharedBytes ?? 0)) {
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline keyTiles',
        `the walk needs ${walk.sharedBytes} bytes of shared memory: set keyTileSharedBytes`,
        String(P.keyTileSharedBytes ?? 0),
      );
    }
    if ((P.pvSkip === true) !== (args.pvSkip !== undefined))
      throw new BlockGemmPolicyError(
        'FmhaFwdWsPipeline pvSkip',
        'runtime PV-skip arguments are given exactly when the policy has pvSkip',
        String(P.pvSkip),
      );
    const walkCtx = { target, tid, shared: add(smem, this.keyTileOffset), m0: args.m0, tileM: P.tileM, tileN: P.tileN };
    walk.emitBeforeSync(b, walkCtx);
    b.push(target.syncThreads());

    const iters = walk.emitIters(b, walkCtx);
    const stageOf = (bb: BlockBuilder, it: Expr): { s: Expr; parity: Expr } => ({
      s: bb.let('s', int32, S === 2 || S === 4 ? bitAnd(it, S - 1) : sub(it, mul(div(it, S), S))),
      parity: bb.let('parity', uint32, cast(bitAnd(div(it, S), 1), uint32)),
    });

    b.if(
      ge(tid, this.consumerThreads),
      (prod) => {
        prod.comment(`producer warpgroup: registers down to ${P.producerRegisters}; one thread issues every TMA load`);
        prod.expr(setMaxNReg(target, 'dec', P.producerRegisters));
        prod.if(eq(tid, this.consumerThreads), (one) => {
          for (const map of [args.qMap, args.kMap, args.vMap]) one.expr(prefetchTensorMap(target, map));
          one.expr(mbarrierArriveExpectTx(target, qFull, this.qBytes));
          for (let c = 0; c < this.slabsQK; c++) {
            one.expr(
              tmaLoad(target, {
                dst: add(smem, c * this.qk.aTileBytes),
                map: args.qMap,
                bar: qFull,
                coords: args.qCoords(c * SLAB, args.m0),
              }),
            );
          }
          const cursor = walk.emitCursor(one, walkCtx);
          one.forRange({ name: 'it', to: iters }, (l, it) => {
            const { s, parity } = stageOf(l, it);
            const row = cursor.row(l, it, 'k_row');
            l.expr(mbarrierWaitParity(target, kEmpty(s), bitXor(parity, 1)));
            l.expr(mbarrierArriveExpectTx(target, kFull(s), this.kStageBytes));
            const kStage = l.let('k_stage', pointer(uint8), add(smem, add(this.kOffset, mul(s, this.kStageBytes))));
            for (let c = 0; c < this.slabsQK; c++)
              l.expr(
                tmaLoad(target, {
                  dst: add(kStage, c * this.qk.bTileBytes),
                  map: args.kMap,
                  bar: kFull(s),
                  coords: args.kCoords(c * SLAB, row),
                }),
              );
            l.expr(mbarrierWaitParity(target, vEmpty(s), bitXor(parity, 1)));
            l.expr(mbarrierArriveExpectTx(target, vFull(s), this.vStageBytes));
            const vStage = l.let('v_stage', pointer(uint8), add(smem, add(this.vOffset, mul(s, this.vStageBytes))));
            for (let c = 0; c < this.slabsV; c++)
              l.expr(
                tmaLoad(target, {
                  dst: add(vStage, c * P.tileN * 128),
                  map: args.vMap,
                  bar: vFull(s),
                  coords: args.vCoords(c * SLAB, row),
                }),
              );
          });
        });
      },
      (cons) => {
        cons.comment(`${this.qk.warpgroups} consumer warpgroup(s) of 64 query rows: registers up to ${P.consumerRegisters}`);
        cons.expr(setMaxNReg(target, 'inc', P.consumerRegisters));
        const block = new BlockEmitter(cons, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } });
        const int8 = P.qkDtype === 'int8';
        if (int8 !== (args.int8Scales !== undefined))
          throw new BlockGemmPolicyError(
            'FmhaFwdWsPipeline int8Scales',
            'are given exactly when the policy has qkDtype int8',
            String(P.qkDtype),
          );
        const sAcc = makeDistributedTensor(block, 's_acc', this.qk.cEncoding, float32);
        const sAccInt = int8 ? makeDistributedTensor(block, 's_acc_i32', this.qk.cEncoding, int32) : undefined;
        const oAcc = makeDistributedTensor(block, 'o_acc', this.pv.cEncoding, float32);
        const pFrag = block.registers('p_frag', uint32, this.pv.aRegisters);
        const softmax = new BlockOnlineSoftmax(block, this.qk.cEncoding);
        block.threads((t) => softmax.emitInit(t));
        const wg = cons.let('warpgroup', int32, div(tid, 128));
        cons.expr(mbarrierWaitParity(target, qFull, 0));
        const qAddr = smemAddr;
        const cursor = walk.emitCursor(cons, walkCtx);
        const vote =
          args.pvSkip === undefined
            ? undefined
            : new FmhaFwdPvSkipVote(cons, target, block, softmax, {
                ...args.pvSkip,
                iters,
                m0: args.m0,
                seqlenQ: args.seqlenQ,
                warpgroup: wg,
                tid,
                consumerThreads: this.consumerThreads,
                votes: cons.let('pv_votes', pointer(int32), cast(add(smem, this.pvVoteOffset), pointer(int32))),
              });
        // S = Q·Kᵀ of a tile once its K stage is full: committed, not waited.
        const issueQk = (l: BlockBuilder, s: Expr, parity: Expr, kAddr: Expr): void => {
          l.comment('S = Q·Kᵀ over the head dim, one 64-wide slab per wgmma group');
          l.expr(mbarrierWaitParity(target, kFull(s), parity));
          for (let c = 0; c < this.slabsQK; c++) {
            this.qk.emitMma(l, target, sAccInt ?? sAcc, {
              aTile: add(qAddr, c * this.qk.aTileBytes),
              bTile: add(kAddr, c * this.qk.bTileBytes),
              warpgroup: wg,
              accumulate: lit(c === 0 ? 0 : 1, int32),
            });
          }
        };
        // O *= c where O holds anything yet, then P packed into the A fragment (zeros for a warp that voted skip).
        const rescaleAndPack = (t: ThreadScope, oLive: Expr, corr: DistributedTensor): void => {
          t.b.if(oLive, (r) => softmax.emitRescale({ ...t, b: r }, oAcc, corr));
          t.b.comment('P to fp16/bf16 pairs: accumulator element 8·kk + i is A-fragment element i of k step kk');
          for (let r = 0; r < this.pv.aRegisters; r++)
            t.b.assign(pFrag.at(t, r), packFloat2(target, P.dtype, sAcc.at(t, 2 * r), sAcc.at(t, 2 * r + 1)));
          if (vote !== undefined) {
            t.b.comment("a warp that voted skip feeds zeros to its warpgroup's P·V (a uniform, rarely taken branch)");
            t.b.if(not(vote.keep), (z) => {
              for (let r = 0; r < this.pv.aRegisters; r++) z.assign(pFrag.at({ ...t, b: z }, r), lit(0, uint32));
            });
          }
        };
        const threadsOf = (l: BlockBuilder): BlockEmitter =>
          new BlockEmitter(l, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } }, block);
        // The mask and the online softmax of the tile in sAcc (S becomes P in place); `then` continues in the same thread scope.
        const softmaxTile = (
          l: BlockBuilder,
          it: Expr,
          j0: Expr,
          then?: (t: ThreadScope, corr: DistributedTensor) => void,
        ): DistributedTensor => {
          const inner = threadsOf(l);
          let scaleLog2 = args.scaleLog2;
          if (sAccInt !== undefined && args.int8Scales !== undefined) {
            l.comment("int8 S to float; the tile's dequantization scales join the softmax scale");
            inner.threads((t) => {
              // |S| ≤ 128·128·128 < 2^22, so the float with S added to the mantissa of 1.5·2^23 is exact:
              // an integer add and a float subtract instead of the quarter-rate I2F conversion.
              for (let e = 0; e < sAcc.size; e++) {
                t.b.assign(
                  sAcc.at(t, e),
                  sub(
                    call('__int_as_float', [add(sAccInt.at(t, e), lit(0x4b400000, int32))], float32, { pure: true }),
                    lit(12582912, float32),
                  ),
                );
              }
            });
            scaleLog2 = l.let('scale_log2_tile', float32, mul(args.scaleLog2, mul(args.int8Scales.q, args.int8Scales.k(l, j0))));
          }
          l.comment('the mask, on the tiles that need it');
          l.if(args.mask.isEdgeTile(args.m0, j0, P.tileM, P.tileN), (mb) => {
            threadsOf(mb).threads((t) =>
              sweepTile(t, sAcc, (e) => {
                e.b.if(args.mask.isMasked(add(args.m0, e.x[0]!), add(j0, e.x[1]!)), (z) =>
                  z.assign(e.value, infinity(float32, { negative: true })),
                );
              }),
            );
          });
          vote?.emitBeginTile(l, it);
          let corr: DistributedTensor | undefined;
          inner.threads((t) => {
            t.b.comment('online softmax: S becomes P = 2^(S·scale·log2 e − m); O *= 2^(m_old − m_new)');
            corr = softmax.emitUpdate(t, sAcc, scaleLog2, vote === undefined ? {} : { gate: (delta) => vote.emitVote(t, delta) })!;
            then?.(t, corr);
          });
          return corr!;
        };
        // O += P·V of the tile whose V is in stage `s` once it is full; `compute` false skips it (the vote); `wait` waits for it.
        const issuePv = (
          l: BlockBuilder,
          vAddr: Expr,
          s: Expr,
          parity: Expr,
          accumulate: Expr,
          compute: Expr | undefined,
          wait: boolean,
        ): void => {
          l.comment('O += P·V (V as an MN-major B operand)');
          l.expr(mbarrierWaitParity(target, vFull(s), parity));
          const mma = (c: BlockBuilder): void => {
            this.pv.emitMma(c, target, oAcc, pFrag, { bTile: vAddr, accumulate });
            if (wait) this.pv.emitWait(c, target, oAcc, 0, pFrag);
          };
          if (compute === undefined) mma(l);
          else {
            l.comment('the PV skip: a warpgroup whose rows all voted skip issues no P·V (V was loaded all the same)');
            l.if(compute, mma);
          }
        };
        // After a tile's P·V (issued or skipped by the vote): O is live once one ran; the counters.
        const countPv = (l: BlockBuilder, computed: Expr): void => vote?.emitAfterTile(l, computed);
        const kTile = (l: BlockBuilder, s: Expr): Expr =>
          l.let('k_tile', uint32, add(smemAddr, cast(add(this.kOffset, mul(s, this.kStageBytes)), uint32)));
        const vTile = (l: BlockBuilder, s: Expr): Expr =>
          l.let('v_tile', uint32, add(smemAddr, cast(add(this.vOffset, mul(s, this.vStageBytes)), uint32)));
        const oLiveNow = (it: Expr): Expr => (vote === undefined ? gt(it, 0) : ne(vote.oLive, 0));
        if (P.overlapSoftmax !== true) {
          cons.forRange({ name: 'it', to: iters }, (l, it) => {
            const { s, parity } = stageOf(l, it);
            const j0 = cursor.row(l, it, 'j0');
            const kAddr = kTile(l, s);
            const vAddr = vTile(l, s);
            issueQk(l, s, parity, kAddr);
            this.qk.emitWait(l, target, sAccInt ?? sAcc, 0);
            l.expr(mbarrierArriveWarp(target, kEmpty(s)));
            softmaxTile(l, it, j0, (t, corr) => rescaleAndPack(t, oLiveNow(it), corr));
            issuePv(l, vAddr, s, parity, vote === undefined ? cast(gt(it, 0), int32) : vote.oLive, vote?.compute, true);
            if (vote !== undefined) countPv(l, vote.compute);
            l.expr(mbarrierArriveWarp(target, vEmpty(s)));
          });
        } else {
          cons.comment("intra-warpgroup overlap: the previous tile's P·V runs while this tile's softmax does");
          // The previous tile's vote, carried into the iteration that issues its P·V.
          const pending =
            vote === undefined ? undefined : cons.declare('pv_pending_compute', bool, lit(true, bool), { storage: 'mutable' });
          cons.if(gt(iters, 0), (ov) => {
            ov.comment('the first tile alone: S, its softmax, P');
            const first = { s: lit(0, int32), parity: lit(0, uint32) };
            const j00 = cursor.row(ov, lit(0, int32), 'j0');
            issueQk(ov, first.s, first.parity, kTile(ov, first.s));
            this.qk.emitWait(ov, target, sAccInt ?? sAcc, 0);
            ov.expr(mbarrierArriveWarp(target, kEmpty(first.s)));
            softmaxTile(ov, lit(0, int32), j00, (t, corr) => rescaleAndPack(t, lit(false, bool), corr));
            if (pending !== undefined && vote !== undefined) ov.assign(pending, vote.compute);
            ov.forRange({ name: 'it', from: 1, to: iters }, (l, it) => {
              const { s, parity } = stageOf(l, it);
              const j0 = cursor.row(l, it, 'j0');
              issueQk(l, s, parity, kTile(l, s));
              const prev = stageOf(l, l.let('it_prev', int32, sub(it, 1)));
              issuePv(l, vTile(l, prev.s), prev.s, prev.parity, vote === undefined ? cast(gt(it, 1), int32) : vote.oLive, pending, false);
              l.comment("this tile's S is done (the previous P·V may still run)");
              this.qk.emitWait(l, target, sAccInt ?? sAcc, 1);
              l.expr(mbarrierArriveWarp(target, kEmpty(s)));
              const corr = softmaxTile(l, it, j0);
              l.comment('the previous P·V is done: its V stage is free, O may be rescaled and P overwritten');
              this.pv.emitWait(l, target, oAcc, 0, pFrag);
              if (pending !== undefined) countPv(l, pending);
              l.expr(mbarrierArriveWarp(target, vEmpty(prev.s)));
              threadsOf(l).threads((t) => rescaleAndPack(t, oLiveNow(it), corr));
              if (pending !== undefined && vote !== undefined) l.assign(pending, vote.compute);
            });
            ov.comment("the last tile's P·V");
            const last = ov.let('it_last', int32, sub(iters, 1));
            const stage = stageOf(ov, last);
            issuePv(
              ov,
              vTile(ov, stage.s),
              stage.s,
              stage.parity,
              vote === undefined ? cast(gt(last, 0), int32) : vote.oLive,
              pending,
              false,
            );
            this.pv.emitWait(ov, target, oAcc, 0, pFrag);
            if (pending !== undefined) countPv(ov, pending);
            ov.expr(mbarrierArriveWarp(target, vEmpty(stage.s)));
          });
        }
        if (vote !== undefined) vote.emitStats(cons, tid);
        cons.comment('epilogue: O /= l (0 for rows with nothing unmasked), LSE, predicated store');
        cons.if(vote === undefined ? eq(iters, 0) : eq(vote.oLive, 0), (z) =>
          new BlockEmitter(z, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } }, block).threads((t) =>
            clearTile(t, oAcc),
          ),
        );
        emitFmhaFwdEpilogue(block, softmax, oAcc, args, { tileM: P.tileM, headDimV: P.headDimV, oEncoding: this.pv.cEncoding });
      },
    );
  }
}
