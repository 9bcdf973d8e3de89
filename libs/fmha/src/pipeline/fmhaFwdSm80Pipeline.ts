import {
  add,
  declareAlignedDynamicShared,
  array,
  bitAnd,
  bool,
  cast,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  div,
  float32,
  gt,
  int32,
  lt,
  maxOf,
  mul,
  pointer,
  sub,
  uint8,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
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
  makeDistributedTensor,
  makeTileWindow,
  moveTileWindow,
  type DistributedTensor,
  type TensorView,
  type TileDistributionEncoding,
  type TileWindow,
} from '@tilekit/tile';
import { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import { emitFmhaFwdEdgeMask } from './fmhaFwdEdgeMask.ts';
import { emitFmhaFwdEpilogue } from './fmhaFwdEpilogue.ts';
import { ResidentABlockGemm } from './fmhaFwdSm80ResidentABlockGemm.ts';
import type { FmhaFwdTileArgs } from './fmhaFwdTileArgs.ts';
import { FMHA_DYNAMIC_SMEM } from './fmhaFwdWsPipeline.ts';
import { FmhaSm80TileCopy } from './fmhaSm80TileCopy.ts';

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

/** A policy rule broken: a `BlockGemmPolicyError` naming the field of the sm_80 pipeline. */
function policyError(what: string, rule: string, found: unknown): never {
  throw new BlockGemmPolicyError(`FmhaFwdSm80Pipeline ${what}`, rule, String(found));
}

/** Checks a policy's fields in order: dtype, head dims, tileM, tileN, Q residence. */
function checkFmhaFwdSm80Policy(policy: FmhaFwdSm80Policy): void {
  const { dtype, headDim, headDimV, tileM, tileN, qResidence } = policy;
  if (dtype !== 'fp16' && dtype !== 'bf16') policyError('dtype', 'must be fp16 or bf16', dtype);
  if (!HEAD_DIMS.includes(headDim)) policyError('headDim', `must be one of ${HEAD_DIMS.join(', ')}`, headDim);
  if (!HEAD_DIMS.includes(headDimV)) policyError('headDimV', `must be one of ${HEAD_DIMS.join(', ')}`, headDimV);
  if (tileM !== 64 && tileM !== 128) policyError('tileM', 'must be 64 (4 warps) or 128 (8 warps): 16 query rows per warp', tileM);
  if (!Number.isSafeInteger(tileN) || tileN < 16 || tileN > 256 || tileN % 16 !== 0)
    policyError('tileN', 'must be a multiple of 16 in [16, 256]', tileN);
  if (qResidence !== 'registers' && qResidence !== 'shared') policyError('qResidence', 'must be "registers" or "shared"', qResidence);
}

/** What the steps of {@link FmhaFwdSm80Pipeline.emit} share: builders, the shared memory, windows, GEMM states and accumulators. */
interface Sm80EmitContext {
  readonly b: BlockBuilder;
  readonly target: Target;
  readonly args: FmhaFwdSm80Args;
  readonly block: BlockEmitter;
  readonly smem: Expr;
  readonly kStart: Expr;
  readonly iters: Expr;
  readonly qWin: TileWindow;
  readonly kWin: TileWindow;
  readonly vWin: TileWindow;
  readonly qkState: MmaSyncBlockGemmState;
  readonly pvState: MmaSyncBlockGemmState;
  readonly sAcc: DistributedTensor;
  readonly oAcc: DistributedTensor;
  readonly softmax: BlockOnlineSoftmax;
  readonly qTile: Expr;
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
  readonly #copy: FmhaSm80TileCopy;

  constructor(policy: FmhaFwdSm80Policy) {
    const { dtype, headDim, headDimV, tileM, tileN, qResidence } = policy;
    checkFmhaFwdSm80Policy(policy);
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
    this.#copy = new FmhaSm80TileCopy('FmhaFwdSm80Pipeline', this.warps);
    this.qCopyEncoding = this.#copy.encoding('Q tile', tileM, headDim);
    this.kCopyEncoding = this.#copy.encoding('K tile', tileN, headDim);
    this.vCopyEncoding = this.#copy.encoding('V tile', tileN, headDimV);
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
        policyError(`${what} stages`, `must start on the ${layout.repeatBytes}-byte swizzle repeat`, offset);
    }
    // sm_80 lets a block opt in to 163 KiB of shared memory (sm_90: 227 KiB).
    if (this.sharedBytes > 166912) policyError('shared memory', 'must fit the 163 KiB an sm_80 block may use', this.sharedBytes);
  }

  /** Query tiles of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number {
    return Math.ceil(seqlenQ / this.policy.tileM);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args): void {
    target.require('cp-async');
    target.require('mma-sync');
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(
      `dynamic shared memory, aligned up to 1024 bytes: Q (${this.qBytes} B), 2 K stages (${this.kStageBytes} B), 2 V stages (${this.vStageBytes} B)`,
    );
    const { smem } = declareAlignedDynamicShared(b, target, FMHA_DYNAMIC_SMEM);
    const block = new BlockEmitter(b, target, { numThreads: this.threads, index: { symbols: args.symbols } });
    const ctx = this.#emitSetup(b, target, args, block, smem, tid);
    const qFrag = this.#emitPrologue(ctx);
    block.forRange({ name: 'it', to: ctx.iters }, (lb, it) => this.#emitKeyIteration(ctx, lb, it, qFrag));
    b.expr(cpAsyncWaitGroup(target, 0));

    b.comment('epilogue: O /= l (0 for rows with nothing unmasked), LSE, predicated store');
    emitFmhaFwdEpilogue(block, ctx.softmax, ctx.oAcc, args, {
      tileM: this.policy.tileM,
      headDimV: this.policy.headDimV,
      oEncoding: this.pv.cEncoding,
    });
  }

  /** The key range the mask leaves, the Q/K/V tile windows, both GEMMs' setup, the accumulators and the softmax state. */
  #emitSetup(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args, block: BlockEmitter, smem: Expr, tid: Expr): Sm80EmitContext {
    const P = this.policy;
    b.comment('the key tiles this query tile visits (the mask decides)');
    const range =
      args.split === undefined
        ? args.mask.getTileRangeAlongX(args.m0, P.tileM, P.tileN)
        : args.mask.getTileRangeAlongXForSplit(args.m0, P.tileM, P.tileN, args.split.count, args.split.index);
    const kStart = b.let('k_start', int32, range.start);
    const iters = b.let('k_iters', int32, maxOf(div(sub(range.end, kStart), P.tileN), 0));
    const windows = this.#makeWindows(block, args, kStart);
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
    return { b, target, args, block, smem, kStart, iters, ...windows, qkState, pvState, sAcc, oAcc, softmax, qTile };
  }

  /** The copy windows of the Q tile (at the block's query rows) and of the first K and V tiles (at `kStart`). */
  #makeWindows(block: BlockEmitter, args: FmhaFwdSm80Args, kStart: Expr): { qWin: TileWindow; kWin: TileWindow; vWin: TileWindow } {
    const P = this.policy;
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
    return { qWin, kWin, vWin };
  }

  /** Prologue: groups {Q, K[0]} and {V[0]}, then (registers residence) Q's A fragments; returns them. */
  #emitPrologue(ctx: Sm80EmitContext): VarExpr | undefined {
    const { b, target, block, iters } = ctx;
    b.comment('prologue: groups {Q, K[0]} and {V[0]}; Q lands first');
    block.threads((t) => this.#copy.emit(t, target, ctx.qWin, this.qCopyEncoding, this.qk.aLayout, ctx.qTile));
    this.#issueIf(ctx, gt(iters, 0), 'K[0] into stage 0', (be) => this.#copyK(ctx, be, 0));
    b.expr(cpAsyncCommitGroup(target));
    this.#issueIf(ctx, gt(iters, 0), 'V[0] into stage 0', (be) => this.#copyV(ctx, be, 0));
    b.expr(cpAsyncCommitGroup(target));
    b.expr(cpAsyncWaitGroup(target, 1));
    block.sync();
    if (!(this.qk instanceof ResidentABlockGemm)) return undefined;
    b.comment(`Q to registers: ${this.qk.residentRegisters} A-fragment registers per thread, kept for every key tile`);
    const qFrag = b.declare('q_frag', array(uint32, this.qk.residentRegisters), null, { storage: 'mutable' });
    this.qk.emitLoadA(b, target, ctx.qkState, ctx.qTile, qFrag);
    return qFrag;
  }

  /** One key tile j: issue K[j+1], S = Q·K[j]ᵀ with the mask, the online softmax, issue V[j+1], O += P·V[j], with the waits between. */
  #emitKeyIteration(ctx: Sm80EmitContext, lb: BlockEmitter, it: Expr, qFrag: VarExpr | undefined): void {
    const { target } = ctx;
    const l = lb.b;
    const next = l.let('next', int32, add(it, 1));
    const more = l.let('more', bool, lt(next, ctx.iters));
    const cur = l.let('cur', int32, bitAnd(it, 1));
    const nxt = l.let('nxt', int32, bitAnd(next, 1));
    l.comment('K[j+1] into the other stage (its last readers passed the barrier after S of j−1)');
    l.if(more, (ib) => this.#copyK(ctx, this.#nested(ctx, ib, lb), nxt));
    l.expr(cpAsyncCommitGroup(target));
    this.#emitScores(ctx, lb, it, cur, qFrag);
    lb.threads((t) => {
      t.b.comment('online softmax: S becomes P = 2^(S·scale·log2 e − m); O *= 2^(m_old − m_new)');
      const corr = ctx.softmax.emitUpdate(t, ctx.sAcc, ctx.args.scaleLog2)!;
      ctx.softmax.emitRescale(t, ctx.oAcc, corr);
    });
    l.comment('V[j] landed and is visible; every warp is done reading K[j]');
    l.expr(cpAsyncWaitGroup(target, 1));
    lb.sync();
    l.if(more, (ib) => this.#copyV(ctx, this.#nested(ctx, ib, lb), nxt));
    l.expr(cpAsyncCommitGroup(target));
    l.comment(
      "O += P·V: P (fp32, in S's C distribution) packed pair by pair into A fragments; V row-major = an MN-major B operand (ldmatrix .trans)",
    );
    this.pv.emitMma(l, target, ctx.oAcc, ctx.pvState, {
      a: ctx.sAcc,
      bTile: this.#stage(ctx, l, this.vOffset, this.vStageBytes, cur, 'v_tile'),
    });
    l.comment('K[j+1] landed and is visible; every warp is done reading V[j]');
    l.expr(cpAsyncWaitGroup(target, 1));
    lb.sync();
  }

  /** S = Q·K[j]ᵀ from stage `cur` (Q from registers or shared memory), then the mask on edge tiles. */
  #emitScores(ctx: Sm80EmitContext, lb: BlockEmitter, it: Expr, cur: Expr, qFrag: VarExpr | undefined): void {
    const { target, sAcc, args } = ctx;
    const P = this.policy;
    const l = lb.b;
    const j0 = l.let('j0', int32, add(ctx.kStart, mul(it, P.tileN)));
    const kTile = this.#stage(ctx, l, this.kOffset, this.kStageBytes, cur, 'k_tile');
    l.comment('S = Q·Kᵀ');
    lb.threads((t) => clearTile(t, sAcc));
    if (this.qk instanceof ResidentABlockGemm) this.qk.emitMmaResidentA(l, target, sAcc, ctx.qkState, qFrag!, kTile);
    else this.qk.emitMma(l, target, sAcc, ctx.qkState, { aTile: ctx.qTile, bTile: kTile });
    emitFmhaFwdEdgeMask(l, { args, j0, tileM: P.tileM, tileN: P.tileN, sAcc, threadsOf: (mb) => this.#nested(ctx, mb, lb) });
  }

  /** A `uint8*` named `name` to stage `s` of the double-buffered region at `offset` (`bytes` per stage). */
  #stage(ctx: Sm80EmitContext, bb: BlockBuilder, offset: number, bytes: number, s: Expr | number, name: string): Expr {
    return bb.let(name, pointer(uint8), add(ctx.smem, add(offset, mul(s, bytes))));
  }

  /** A block emitter for the nested builder `ib` (an `if` body) under `parent`. */
  #nested(ctx: Sm80EmitContext, ib: BlockBuilder, parent: BlockEmitter): BlockEmitter {
    return new BlockEmitter(ib, ctx.target, { numThreads: this.threads, index: ctx.block.indexOptions }, parent);
  }

  /** `body` under `if (cond)` at block level, after the comment `name`. */
  #issueIf(ctx: Sm80EmitContext, cond: Expr, name: string, body: (be: BlockEmitter) => void): void {
    ctx.b.comment(name);
    ctx.block.b.if(cond, (ib) => body(this.#nested(ctx, ib, ctx.block)));
  }

  /** Copies the K tile into K stage `s` and moves the K window to the next tile. */
  #copyK(ctx: Sm80EmitContext, be: BlockEmitter, s: Expr | number): void {
    const dst = this.#stage(ctx, be.b, this.kOffset, this.kStageBytes, s, 'k_dst');
    this.#copyInto(ctx, be, ctx.kWin, this.kCopyEncoding, this.qk.bLayout, dst);
  }

  /** Copies the V tile into V stage `s` and moves the V window to the next tile. */
  #copyV(ctx: Sm80EmitContext, be: BlockEmitter, s: Expr | number): void {
    const dst = this.#stage(ctx, be.b, this.vOffset, this.vStageBytes, s, 'v_dst');
    this.#copyInto(ctx, be, ctx.vWin, this.vCopyEncoding, this.pv.bLayout, dst);
  }

  /** Every thread's cp.async copies of `win` into `dst`, then the window moves one key tile on. */
  #copyInto(
    ctx: Sm80EmitContext,
    be: BlockEmitter,
    win: TileWindow,
    enc: TileDistributionEncoding,
    layout: WgmmaSmemLayout,
    dst: Expr,
  ): void {
    be.threads((t) => this.#copy.emit(t, ctx.target, win, enc, layout, dst));
    moveTileWindow(be, win, [this.policy.tileN, 0]);
  }
}
