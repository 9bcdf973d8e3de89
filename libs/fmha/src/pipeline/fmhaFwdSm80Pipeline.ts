import {
  add,
  declareAlignedDynamicShared,
  addressOf,
  array,
  bitAnd,
  bool,
  bitXor,
  cast,
  cpAsync,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  div,
  float32,
  gt,
  index,
  infinity,
  int32,
  ldmatrix,
  lt,
  maxOf,
  mul,
  pointer,
  select,
  sub,
  uint8,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import {
  BlockGemmPolicyError,
  MmaSyncBlockGemmRs,
  MmaSyncBlockGemmSs,
  type MmaSyncBlockGemmState,
  type WgmmaSmemLayout,
} from '@tilekit/gemm';
import {
  BlockEmitter,
  clearTile,
  emitPartitionIndex,
  emitTileWindowAccesses,
  emitXIndex,
  makeDistributedTensor,
  makeTileWindow,
  makeVectorLoadEncoding,
  moveTileWindow,
  sweepTile,
  type DistributedTensor,
  type TensorView,
  type ThreadScope,
  type TileDistributionEncoding,
  type TileWindow,
} from '@tilekit/tile';
import { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import { emitFmhaFwdEpilogue } from './fmhaFwdEpilogue.ts';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';
import { FMHA_DYNAMIC_SMEM } from './fmhaFwdWsPipeline.ts';

/** Policy of {@link FmhaFwdSm80Pipeline}: tile shape and where Q lives during the key loop. */
export interface FmhaFwdSm80Policy {
  /** Q/K/V/O element type (fp32 accumulation and softmax). */
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K (the first GEMM's K): 32, 64, 128 or 256 (whole swizzle rows, 16-byte copies spread over one warp). */
  readonly headDim: number;
  /** Head dim of V and O (the second GEMM's N): 32, 64, 128 or 256. */
  readonly headDimV: number;
  /** Query rows per block: 16 per warp, warps along M only (64: 4 warps, 128: 8 warps). */
  readonly tileM: number;
  /** Key rows per iteration: a multiple of 16 in [16, 256] that the 16-byte copy distribution can split. */
  readonly tileN: number;
  /**
   * `registers`: Q is read from shared memory once into mma.sync A fragments (4·headDim/16 registers
   * per thread: 32 at d = 128) and reused for every key tile — FlashAttention-2's choice, it saves
   * headDim/16 ldmatrix.x4 per key tile. `shared`: Q is re-read with ldmatrix every key tile, for
   * head dims whose fragments would crowd out the O accumulator (d = 256: 64 more registers next to 128).
   */
  readonly qResidence: 'registers' | 'shared';
}

/** What the kernel hands the pipeline: its values as expressions. */
export interface FmhaFwdSm80Args extends FmhaFwdTileArgs {
  /**
   * Q as a [seqlenQ, headDim] view and K, V as [seqlenK, headDim(V)] views of this block's (batch,
   * head) sequences: head dim contiguous, row stride a multiple of 8 elements, pointer 16-byte aligned
   * (every row is whole 16-byte cp.async vectors).
   */
  readonly q: TensorView;
  readonly k: TensorView;
  readonly v: TensorView;
}

/** Head dims whose rows are whole swizzle rows and whose 16-byte copies of a row fit one warp. */
const HEAD_DIMS = [32, 64, 128, 256];

/**
 * The S = Q·Kᵀ block GEMM with Q held in registers: `MmaSyncBlockGemmSs` whose A fragments of every
 * k16 step are loaded once (the same ldmatrix plan, each step's registers kept apart) and then fed
 * to the mma.sync of every key tile.
 */
class ResidentABlockGemm extends MmaSyncBlockGemmSs {
  /** Registers of the whole A tile: 4 per (k16 step, m16 repeat). */
  get residentRegisters(): number {
    return 4 * this.mRepeats * this.kSteps;
  }

  #slot(kk: number, i: number): number {
    return 4 * (kk * this.mRepeats + i);
  }

  /** ldmatrix of every A fragment of the tile at `aTile` into `frag` (a `residentRegisters` array). */
  emitLoadA(b: BlockBuilder, target: Target, state: MmaSyncBlockGemmState, aTile: Expr, frag: VarExpr): void {
    for (const l of this.aPlan.loads) {
      b.expr(
        ldmatrix(target, {
          count: 4,
          trans: this.aLayout.major === 'MN',
          dst: addressOf(index(frag, this.#slot(l.kk, l.q))),
          src: add(aTile, bitXor(add(state.aBase!, l.add), l.xor)),
        }),
      );
    }
  }

  /** acc += A·B with A from `frag` (see {@link emitLoadA}) and B from `bTile`. */
  emitMmaResidentA(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    state: MmaSyncBlockGemmState,
    frag: VarExpr,
    bTile: Expr,
  ): void {
    target.require('mma-sync');
    this.checkAcc(acc, 'ResidentABlockGemm.emitMmaResidentA');
    for (let kk = 0; kk < this.kSteps; kk++) {
      this.emitBLoads(b, target, state, bTile, kk);
      this.emitMmas(b, target, acc, (i) => addressOf(index(frag, this.#slot(kk, i))), state);
    }
  }
}

/**
 * The sm_80 attention forward main loop (FlashAttention-2's schedule, CK-tile's
 * `BlockFmhaPipelineQRKSVSAsync` flavour), for `tileM / 16` warps that each own 16 query rows
 * (warps along M only, so a row's keys stay inside one warp: what `BlockOnlineSoftmax` needs):
 * - Copies: 16-byte `cp.async.cg` of coalesced vector distributions (tile's `makeVectorLoadEncoding`)
 *   into XOR-swizzled tiles (`makeLdmatrixSmemLayout`). A vector whose row lies outside the sequence
 *   copies 0 source bytes (src-size 0, source clamped to the view's base) and is zero-filled: no
 *   reliance on hardware bounds checks.
 * - Q (tileM × headDim) is copied once; with `qResidence: 'registers'` it is read into mma.sync A
 *   fragments once (ldmatrix), else re-read each key tile.
 * - K and V tiles are double-buffered, each in its own cp.async group. Iteration j: issue K[j+1],
 *   S = Q·K[j]ᵀ (mma.sync m16n8k16, K K-major: ldmatrix), the mask on edge tiles, the online
 *   softmax of `BlockOnlineSoftmax` (O rescaled; P overwrites S in place); wait for V[j] and
 *   `__syncthreads` (V[j] visible, every warp done reading K[j]); issue V[j+1]; O += P·V[j]
 *   (`MmaSyncBlockGemmRs` with P as A straight from S's registers: with warps only along M, C tiles
 *   2kk and 2kk+1 are A fragment kk, so each pair is one `cvt.rn` pack and no data moves between
 *   lanes; V is row-major [keys][d] = the K×N B operand N-contiguous, i.e.
 *   MN-major: ldmatrix .trans); wait for K[j+1] and `__syncthreads` (visible, every warp done with V[j]).
 *   Group order per thread: {Q, K0}, {V0}, then per iteration {K[j+1]}, {V[j+1]} (empty past the
 *   last tile), so `cp.async.wait_group 1` always leaves exactly the newest group in flight.
 * - Epilogue: O /= l (0 for rows with nothing unmasked), the natural-log LSE, predicated stores.
 * Shared memory (1024-aligned): Q, 2 K stages, 2 V stages.
 */
export class FmhaFwdSm80Pipeline {
  readonly policy: FmhaFwdSm80Policy;
  readonly warps: number;
  readonly threads: number;
  /** S = Q·Kᵀ: A = Q (tileM × headDim, K-major), B = K (tileN × headDim, K-major). */
  readonly qk: MmaSyncBlockGemmSs;
  /** O += P·V: A = P in registers (tileM × tileN, S's accumulator as it is), B = V (headDimV × tileN, MN-major). */
  readonly pv: MmaSyncBlockGemmRs;
  /** Copy distributions of the Q, K and V tiles ([rows, head dim], 16-byte vectors). */
  readonly qCopyEncoding: TileDistributionEncoding;
  readonly kCopyEncoding: TileDistributionEncoding;
  readonly vCopyEncoding: TileDistributionEncoding;
  readonly qBytes: number;
  readonly kStageBytes: number;
  readonly vStageBytes: number;
  readonly kOffset: number;
  readonly vOffset: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request (used + 1024 bytes of alignment slack). */
  readonly sharedBytes: number;
  /** Registers per thread Q occupies across the loop (0 when re-read from shared memory). */
  readonly qRegisters: number;

  constructor(policy: FmhaFwdSm80Policy) {
    const { dtype, headDim, headDimV, tileM, tileN, qResidence } = policy;
    const bad = (what: string, rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError(`FmhaFwdSm80Pipeline ${what}`, rule, String(found));
    };
    if (dtype !== 'fp16' && dtype !== 'bf16') bad('dtype', 'must be fp16 or bf16', dtype);
    if (!HEAD_DIMS.includes(headDim)) bad('headDim', `must be one of ${HEAD_DIMS.join(', ')}`, headDim);
    if (!HEAD_DIMS.includes(headDimV)) bad('headDimV', `must be one of ${HEAD_DIMS.join(', ')}`, headDimV);
    if (tileM !== 64 && tileM !== 128) bad('tileM', 'must be 64 (4 warps) or 128 (8 warps): 16 query rows per warp', tileM);
    if (!Number.isSafeInteger(tileN) || tileN < 16 || tileN > 256 || tileN % 16 !== 0)
      bad('tileN', 'must be a multiple of 16 in [16, 256]', tileN);
    if (qResidence !== 'registers' && qResidence !== 'shared') bad('qResidence', 'must be "registers" or "shared"', qResidence);
    this.policy = Object.freeze({ ...policy });
    this.warps = tileM / 16;
    this.threads = 32 * this.warps;
    const warps = [this.warps, 1] as const;
    this.qk =
      qResidence === 'registers'
        ? new ResidentABlockGemm({ dtype, tileM, tileN, tileK: headDim, warps, aMajor: 'K', bMajor: 'K' })
        : new MmaSyncBlockGemmSs({ dtype, tileM, tileN, tileK: headDim, warps, aMajor: 'K', bMajor: 'K' });
    this.pv = new MmaSyncBlockGemmRs({ dtype, tileM, tileN: headDimV, tileK: tileN, warps, bMajor: 'MN' });
    this.qRegisters = this.qk instanceof ResidentABlockGemm ? this.qk.residentRegisters : 0;
    const copy = (what: string, rows: number, cols: number): TileDistributionEncoding => {
      try {
        return makeVectorLoadEncoding({ rows, cols, vectorLength: 8, warpSize: 32, numWarps: this.warps });
      } catch (error) {
        return bad(
          `${what} tile`,
          `${rows}×${cols} must split into 16-byte vectors over ${this.threads} threads`,
          (error as Error).message,
        );
      }
    };
    this.qCopyEncoding = copy('Q', tileM, headDim);
    this.kCopyEncoding = copy('K', tileN, headDim);
    this.vCopyEncoding = copy('V', tileN, headDimV);
    this.qBytes = this.qk.aTileBytes;
    this.kStageBytes = this.qk.bTileBytes;
    this.vStageBytes = this.pv.bTileBytes;
    this.kOffset = this.qBytes;
    this.vOffset = this.kOffset + 2 * this.kStageBytes;
    this.usedBytes = this.vOffset + 2 * this.vStageBytes;
    this.sharedBytes = this.usedBytes + 1024;
    for (const [what, offset, layout] of [
      ['K', this.kOffset, this.qk.bLayout],
      ['V', this.vOffset, this.pv.bLayout],
    ] as const) {
      if (offset % layout.repeatBytes !== 0 || this.kStageBytes % layout.repeatBytes !== 0)
        bad(`${what} stages`, `must start on the ${layout.repeatBytes}-byte swizzle repeat`, offset);
    }
    // sm_80 lets a block opt in to 163 KiB of shared memory (sm_90: 227 KiB).
    if (this.sharedBytes > 166912) bad('shared memory', 'must fit the 163 KiB an sm_80 block may use', this.sharedBytes);
  }

  /** Query tiles of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number {
    return Math.ceil(seqlenQ / this.policy.tileM);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args): void {
    target.require('cp-async');
    target.require('mma-sync');
    const P = this.policy;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(
      `dynamic shared memory, aligned up to 1024 bytes: Q (${this.qBytes} B), 2 K stages (${this.kStageBytes} B), 2 V stages (${this.vStageBytes} B)`,
    );
    const { smem } = declareAlignedDynamicShared(b, target, FMHA_DYNAMIC_SMEM);
    const stage = (bb: BlockBuilder, offset: number, bytes: number, s: Expr | number, name: string): Expr =>
      bb.let(name, pointer(uint8), add(smem, add(offset, mul(s, bytes))));

    const block = new BlockEmitter(b, target, { numThreads: this.threads, index: { symbols: args.symbols } });
    b.comment('the key tiles this query tile visits (the mask decides)');
    const range =
      args.split === undefined
        ? args.mask.getTileRangeAlongX(args.m0, P.tileM, P.tileN)
        : args.mask.getTileRangeAlongXForSplit(args.m0, P.tileM, P.tileN, args.split.count, args.split.index);
    const kStart = b.let('k_start', int32, range.start);
    const iters = b.let('k_iters', int32, maxOf(div(sub(range.end, kStart), P.tileN), 0));

    const qWin = makeTileWindow(block, {
      view: args.q,
      lengths: [P.tileM, P.headDim],
      origin: [args.m0, 0],
      encoding: this.qCopyEncoding,
      originAlignment: [P.tileM, 0],
    });
    const kWin = makeTileWindow(block, {
      view: args.k,
      lengths: [P.tileN, P.headDim],
      origin: [kStart, 0],
      encoding: this.kCopyEncoding,
      originAlignment: [P.tileN, 0],
    });
    const vWin = makeTileWindow(block, {
      view: args.v,
      lengths: [P.tileN, P.headDimV],
      origin: [kStart, 0],
      encoding: this.vCopyEncoding,
      originAlignment: [P.tileN, 0],
    });
    const copyInto = (
      be: BlockEmitter,
      win: TileWindow,
      enc: TileDistributionEncoding,
      layout: WgmmaSmemLayout,
      dst: Expr,
      move: boolean,
    ): void => {
      be.threads((t) => this.#emitCopy(t, target, win, enc, layout, dst));
      if (move) moveTileWindow(be, win, [P.tileN, 0]);
    };
    const issueIf = (cond: Expr, name: string, body: (be: BlockEmitter) => void): void => {
      b.comment(name);
      block.b.if(cond, (ib) => body(new BlockEmitter(ib, target, { numThreads: this.threads, index: block.indexOptions }, block)));
    };

    const qkState = this.qk.emitSetup(b, block.indexEmitter, tid);
    const pvState = this.pv.emitSetup(b, block.indexEmitter, tid);
    const sAcc = makeDistributedTensor(block, 's_acc', this.qk.cEncoding, float32);
    const oAcc = makeDistributedTensor(block, 'o_acc', this.pv.cEncoding, float32);
    const softmax = new BlockOnlineSoftmax(block, this.qk.cEncoding);
    block.threads((t) => {
      softmax.emitInit(t);
      clearTile(t, oAcc);
    });
    const qTile = b.let('q_tile', pointer(uint8), smem);

    b.comment('prologue: groups {Q, K[0]} and {V[0]}; Q lands first');
    block.threads((t) => this.#emitCopy(t, target, qWin, this.qCopyEncoding, this.qk.aLayout, qTile));
    issueIf(gt(iters, 0), 'K[0] into stage 0', (be) =>
      copyInto(be, kWin, this.kCopyEncoding, this.qk.bLayout, stage(be.b, this.kOffset, this.kStageBytes, 0, 'k_dst'), true),
    );
    b.expr(cpAsyncCommitGroup(target));
    issueIf(gt(iters, 0), 'V[0] into stage 0', (be) =>
      copyInto(be, vWin, this.vCopyEncoding, this.pv.bLayout, stage(be.b, this.vOffset, this.vStageBytes, 0, 'v_dst'), true),
    );
    b.expr(cpAsyncCommitGroup(target));
    b.expr(cpAsyncWaitGroup(target, 1));
    block.sync();
    let qFrag: VarExpr | undefined;
    if (this.qk instanceof ResidentABlockGemm) {
      b.comment(`Q to registers: ${this.qk.residentRegisters} A-fragment registers per thread, kept for every key tile`);
      qFrag = b.declare('q_frag', array(uint32, this.qk.residentRegisters), null, { storage: 'mutable' });
      this.qk.emitLoadA(b, target, qkState, qTile, qFrag);
    }

    block.forRange({ name: 'it', to: iters }, (lb, it) => {
      const l = lb.b;
      const next = l.let('next', int32, add(it, 1));
      const more = l.let('more', bool, lt(next, iters));
      const cur = l.let('cur', int32, bitAnd(it, 1));
      const nxt = l.let('nxt', int32, bitAnd(next, 1));
      l.comment('K[j+1] into the other stage (its last readers passed the barrier after S of j−1)');
      l.if(more, (ib) => {
        const be = new BlockEmitter(ib, target, { numThreads: this.threads, index: block.indexOptions }, lb);
        copyInto(be, kWin, this.kCopyEncoding, this.qk.bLayout, stage(ib, this.kOffset, this.kStageBytes, nxt, 'k_dst'), true);
      });
      l.expr(cpAsyncCommitGroup(target));
      const j0 = l.let('j0', int32, add(kStart, mul(it, P.tileN)));
      const kTile = stage(l, this.kOffset, this.kStageBytes, cur, 'k_tile');
      l.comment('S = Q·Kᵀ');
      lb.threads((t) => clearTile(t, sAcc));
      if (this.qk instanceof ResidentABlockGemm) this.qk.emitMmaResidentA(l, target, sAcc, qkState, qFrag!, kTile);
      else this.qk.emitMma(l, target, sAcc, qkState, { aTile: qTile, bTile: kTile });
      l.comment('the mask, on the tiles that need it');
      l.if(args.mask.isEdgeTile(args.m0, j0, P.tileM, P.tileN), (mb) => {
        new BlockEmitter(mb, target, { numThreads: this.threads, index: block.indexOptions }, lb).threads((t) =>
          sweepTile(t, sAcc, (e) => {
            e.b.if(args.mask.isMasked(add(args.m0, e.x[0]!), add(j0, e.x[1]!)), (z) =>
              z.assign(e.value, infinity(float32, { negative: true })),
            );
          }),
        );
      });
      lb.threads((t) => {
        t.b.comment('online softmax: S becomes P = 2^(S·scale·log2 e − m); O *= 2^(m_old − m_new)');
        const corr = softmax.emitUpdate(t, sAcc, args.scaleLog2)!;
        softmax.emitRescale(t, oAcc, corr);
      });
      l.comment('V[j] landed and is visible; every warp is done reading K[j]');
      l.expr(cpAsyncWaitGroup(target, 1));
      lb.sync();
      l.if(more, (ib) => {
        const be = new BlockEmitter(ib, target, { numThreads: this.threads, index: block.indexOptions }, lb);
        copyInto(be, vWin, this.vCopyEncoding, this.pv.bLayout, stage(ib, this.vOffset, this.vStageBytes, nxt, 'v_dst'), true);
      });
      l.expr(cpAsyncCommitGroup(target));
      l.comment(
        "O += P·V: P (fp32, in S's C distribution) packed pair by pair into A fragments; V row-major = an MN-major B operand (ldmatrix .trans)",
      );
      this.pv.emitMma(l, target, oAcc, pvState, { a: sAcc, bTile: stage(l, this.vOffset, this.vStageBytes, cur, 'v_tile') });
      l.comment('K[j+1] landed and is visible; every warp is done reading V[j]');
      l.expr(cpAsyncWaitGroup(target, 1));
      lb.sync();
    });
    b.expr(cpAsyncWaitGroup(target, 0));

    b.comment('epilogue: O /= l (0 for rows with nothing unmasked), LSE, predicated store');
    emitFmhaFwdEpilogue(block, softmax, oAcc, args, { tileM: P.tileM, headDimV: P.headDimV, oEncoding: this.pv.cEncoding });
  }

  /**
   * The calling thread's cp.async copies of one [rows, head dim] tile: each 16-byte vector of the
   * copy distribution (global offset and in-bounds predicate from the tile window walk) goes to the
   * swizzled shared offset of its (row, column); src-size 16 inside the sequence, 0 (zero fill,
   * source clamped to the view's base) outside.
   */
  #emitCopy(t: ThreadScope, target: Target, win: TileWindow, enc: TileDistributionEncoding, layout: WgmmaSmemLayout, dst: Expr): void {
    const b = t.b;
    const ps = emitPartitionIndex(t, enc);
    const view = win.view;
    // [rows, head dim] is [MN, K] for K and Q (K-major) and [K, MN] for V (MN-major): the layout takes (mn, k).
    const traits = emitTileWindowAccesses(t, win, enc, ({ offset, pred, ys }) => {
      const xs = emitXIndex(t, enc, ps, ys);
      const mnk = layout.major === 'K' ? xs : [xs[1]!, xs[0]!];
      const { offset: smemOffset } = emitCalculateOffset(b, layout.descriptor, mnk, t.block.indexEmitter);
      const src = addressOf(index(view.pointer, select(pred, offset, 0)));
      b.expr(cpAsync(target, { dst: add(dst, mul(smemOffset, layout.elementBytes)), src, bytes: 16, srcBytes: select(pred, 16, 0) }));
    });
    if (traits.scalarPerVector !== 8 || traits.vectorDimX !== 1) {
      throw new BlockGemmPolicyError(
        'FmhaFwdSm80Pipeline Q/K/V view',
        'must allow 8-element vectors along the head dim: stride 1, the row stride a multiple of 8',
        `${traits.scalarPerVector} along X${traits.vectorDimX}`,
      );
    }
  }
}
