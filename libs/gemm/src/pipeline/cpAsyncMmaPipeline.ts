import {
  add,
  addressOf,
  bitAnd,
  cast,
  cpAsync,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  div,
  float32,
  index,
  int32,
  lt,
  minOf,
  mod,
  mul,
  pointer,
  select,
  sharedAddress,
  sub,
  uint8,
  uint32,
  variable,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
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
  storeTile,
  type TensorView,
  type TileDistributionEncoding,
  type TileWindow,
} from '@tilekit/tile';
import { MmaSyncBlockGemmSs, type MmaSyncBlockGemmPolicy } from '../block/blockGemmMmaSync.ts';
import { BlockGemmPolicyError } from '../block/blockGemmWgmmaSs.ts';
import type { WgmmaSmemLayout } from '../smemLayouts.ts';
import { emitGemmEpilogue, isIdentityEpilogue, type GemmEpilogue } from './gemmEpilogue.ts';
import { GroupedTilePartitioner } from './groupedTilePartitioner.ts';
import { GEMM_DYNAMIC_SMEM } from './wsTmaWgmmaPipeline.ts';

/** Policy of {@link CpAsyncMmaPipeline}: the block GEMM's shape plus the pipeline's. */
export interface CpAsyncMmaPolicy extends MmaSyncBlockGemmPolicy {
  /** Shared-memory stages of the cp.async ring: 2, 3 or 4. */
  readonly stages: number;
  /** Grouped rasterization: M tiles per group. */
  readonly groupM: number;
}

/** One global operand as the pipeline reads it. */
export interface CpAsyncOperand {
  /**
   * The operand in its storage order, [strided, contiguous] (K-major: [MN, K]; MN-major: [K, MN]),
   * contiguous stride 1 and the contiguous length a multiple of 8 (the true length rounded up: the
   * ragged tail is zero-filled by the copy's src-size, not read).
   */
  readonly view: TensorView;
  /** The true contiguous length (`int`): K for K-major operands, M or N for MN-major ones. */
  readonly contiguousLength: Expr;
}

/** What the kernel hands the pipeline: its parameters as expressions. */
export interface CpAsyncMmaArgs {
  readonly a: CpAsyncOperand;
  readonly b: CpAsyncOperand;
  readonly m: Expr;
  readonly n: Expr;
  readonly k: Expr;
  /** The C view (M×N) written by the epilogue (already offset to the batch's matrix). */
  readonly c: TensorView;
  /** Kernel symbols the descriptors use (name → `int` expression). */
  readonly symbols: Readonly<Record<string, Expr>>;
  /** Optional epilogue functor C = act(alpha·acc + bias[n]) (default none). */
  readonly epilogue?: { readonly functor: GemmEpilogue; readonly alpha: Expr; readonly bias?: Expr };
}

/**
 * The sm_80 multi-stage GEMM main loop (CK's `GemmPipelineAgBgCrCompV3`-style, the CUTLASS
 * "multistage" schedule): every thread copies 16-byte vectors global → shared with `cp.async.cg`,
 * S stages in flight; the block GEMM ({@link MmaSyncBlockGemmSs}: ldmatrix + mma.sync) consumes one
 * stage per K tile.
 * - Partition: grid.x = ⌈M/tileM⌉·⌈N/tileN⌉ blocks, grouped by `groupM` M tiles (as the sm_90a pipeline).
 * - Copies: a coalesced vector distribution of each tile in its storage order (tile's
 *   `makeVectorLoadEncoding`, 8 elements per thread access) through a global tile window; each
 *   vector lands at its (mn, k) offset of the XOR-swizzled tile. Ragged edges never rely on
 *   hardware bounds checks: a vector whose row is outside the tensor copies 0 bytes (src-size 0,
 *   the source pointer clamped to the base); the last partial vector of a row copies only
 *   (length − start)·2 bytes; the rest is zero-filled, so the MMAs see zeros beyond M, N and K.
 * - Schedule: prologue issues tiles 0 … S−2 (one commit group each, empty past the last tile);
 *   iteration kt waits `cp.async.wait_group S−2` (tile kt is in), `__syncthreads` (everyone's
 *   copies landed and everyone finished reading the stage about to be refilled), issues tile
 *   kt+S−1 into stage (kt−1) mod S, commits, then runs the block GEMM on stage kt mod S.
 * - Epilogue: optional functor, then the fp32 accumulator is converted and stored through a C tile
 *   window with every access predicated on the ragged M/N edge (tile's `storeTile`).
 */
export class CpAsyncMmaPipeline {
  readonly policy: CpAsyncMmaPolicy;
  readonly block: MmaSyncBlockGemmSs;
  readonly threads: number;
  /** Copy distributions of the A and B tiles in storage order [strided, contiguous]. */
  readonly aCopyEncoding: TileDistributionEncoding;
  readonly bCopyEncoding: TileDistributionEncoding;
  readonly aStageOffset = 0;
  readonly bStageOffset: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request at launch (used bytes + 1024 of alignment slack). */
  readonly sharedBytes: number;
  /** The grouped rasterization of block tiles (shared with the sm_90a pipeline). */
  readonly partitioner: GroupedTilePartitioner;

  constructor(policy: CpAsyncMmaPolicy) {
    const { stages, groupM } = policy;
    if (!Number.isSafeInteger(stages) || stages < 2 || stages > 4)
      throw new BlockGemmPolicyError('CpAsyncMmaPipeline stages', 'must be 2, 3 or 4', String(stages));
    if (!Number.isSafeInteger(groupM) || groupM < 1)
      throw new BlockGemmPolicyError('CpAsyncMmaPipeline groupM', 'must be a positive integer', String(groupM));
    this.policy = Object.freeze({ ...policy });
    this.partitioner = new GroupedTilePartitioner(policy, 'CpAsyncMmaPipeline');
    this.block = new MmaSyncBlockGemmSs(policy);
    this.threads = this.block.threads;
    this.aCopyEncoding = this.copyEncoding('A', this.block.aLayout);
    this.bCopyEncoding = this.copyEncoding('B', this.block.bLayout);
    this.bStageOffset = stages * this.block.aTileBytes;
    this.usedBytes = this.bStageOffset + stages * this.block.bTileBytes;
    this.sharedBytes = this.usedBytes + 1024;
  }

  private copyEncoding(operand: string, layout: WgmmaSmemLayout): TileDistributionEncoding {
    const [rows, cols] = layout.major === 'K' ? [layout.mn, layout.k] : [layout.k, layout.mn];
    try {
      return makeVectorLoadEncoding({ rows, cols, vectorLength: 8, warpSize: 32, numWarps: this.threads / 32 });
    } catch (error) {
      throw new BlockGemmPolicyError(
        `CpAsyncMmaPipeline ${operand} tile`,
        `${rows}×${cols} (storage order) must split into 16-byte vectors over ${this.threads} threads`,
        (error as Error).message,
      );
    }
  }

  /** Blocks of the grid (x only) for an M×N problem. */
  gridSize(m: number, n: number): number {
    return this.partitioner.gridSize(m, n);
  }

  /** The block tile (tm, tn) of block `pid`: the same grouped rasterization as the emitted code. */
  tileOf(pid: number, m: number, n: number): [number, number] {
    return this.partitioner.tileOf(pid, m, n);
  }

  /** Emits the whole kernel body into `b` (the entry's block). */
  emit(b: BlockBuilder, target: Target, args: CpAsyncMmaArgs): void {
    target.require('cp-async');
    const P = this.policy;
    const S = P.stages;
    const blk = this.block;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(`tile partition: ${P.tileM}x${P.tileN} tiles, grouped by ${P.groupM} M tiles`);
    const { tilesM, tilesN } = this.partitioner.emitTileCounts(b, args.m, args.n);
    const pid = b.let('pid', int32, cast(target.blockIdx('x'), int32));
    const { m0, n0 } = this.partitioner.emitTileOrigin(b, pid, this.partitioner.emitGroupWidth(b, tilesN), tilesM);
    const kTiles = b.let('k_tiles', int32, div(add(args.k, P.tileK - 1), P.tileK));

    b.comment(`dynamic shared memory, aligned up to 1024 bytes (the swizzle repeat): ${S} A stages, ${S} B stages`);
    b.verbatim(`extern __shared__ __align__(1024) unsigned char ${GEMM_DYNAMIC_SMEM}[];`);
    const raw = variable(GEMM_DYNAMIC_SMEM, pointer(uint8));
    const rawAddr = b.let('smem_raw', uint32, sharedAddress(target, raw));
    const smem = b.let('smem', pointer(uint8), add(raw, bitAnd(sub(1024, bitAnd(rawAddr, 1023)), 1023)));

    const block = new BlockEmitter(b, target, { numThreads: this.threads, index: { symbols: args.symbols } });
    const window = (op: CpAsyncOperand, layout: WgmmaSmemLayout, mn0: Expr, enc: TileDistributionEncoding): TileWindow => {
      const kMajor = layout.major === 'K';
      return makeTileWindow(block, {
        view: op.view,
        lengths: kMajor ? [layout.mn, layout.k] : [layout.k, layout.mn],
        origin: kMajor ? [mn0, 0] : [0, mn0],
        encoding: enc,
        originAlignment: kMajor ? [layout.mn, layout.k] : [layout.k, layout.mn],
      });
    };
    const aWin = window(args.a, blk.aLayout, m0, this.aCopyEncoding);
    const bWin = window(args.b, blk.bLayout, n0, this.bCopyEncoding);
    const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
    block.threads((t) => clearTile(t, acc));
    const state = blk.emitSetup(b, block.indexEmitter, tid);

    const stageTile = (bb: BlockBuilder, offset: number, bytes: number, stage: Expr | number, name: string): Expr =>
      bb.let(name, pointer(uint8), add(smem, add(offset, mul(stage, bytes))));
    const issue = (be: BlockEmitter, stage: Expr | number): void => {
      const aTile = stageTile(be.b, this.aStageOffset, blk.aTileBytes, stage, 'a_dst');
      const bTile = stageTile(be.b, this.bStageOffset, blk.bTileBytes, stage, 'b_dst');
      be.threads((t) => {
        this.emitCopy(t.b, target, t, aWin, this.aCopyEncoding, blk.aLayout, aTile, args.a.contiguousLength);
        this.emitCopy(t.b, target, t, bWin, this.bCopyEncoding, blk.bLayout, bTile, args.b.contiguousLength);
      });
      for (const [w, layout] of [
        [aWin, blk.aLayout],
        [bWin, blk.bLayout],
      ] as const) {
        moveTileWindow(be, w, layout.major === 'K' ? [0, P.tileK] : [P.tileK, 0]);
      }
    };

    b.comment(`prologue: K tiles 0..${S - 2} in flight (one commit group each)`);
    for (let s = 0; s < S - 1; s++) {
      b.if(lt(s, kTiles), (ib) => issue(new BlockEmitter(ib, target, { numThreads: this.threads, index: block.indexOptions }, block), s));
      b.expr(cpAsyncCommitGroup(target));
    }
    block.forRange({ name: 'kt', to: kTiles }, (lb, kt) => {
      lb.b.expr(cpAsyncWaitGroup(target, S - 2));
      lb.sync();
      const next = lb.b.let('next', int32, add(kt, S - 1));
      lb.b.if(lt(next, kTiles), (ib) =>
        issue(new BlockEmitter(ib, target, { numThreads: this.threads, index: block.indexOptions }, lb), mod(next, S)),
      );
      lb.b.expr(cpAsyncCommitGroup(target));
      const stage = lb.b.let('stage', int32, mod(kt, S));
      const aTile = stageTile(lb.b, this.aStageOffset, blk.aTileBytes, stage, 'a_tile');
      const bTile = stageTile(lb.b, this.bStageOffset, blk.bTileBytes, stage, 'b_tile');
      blk.emitMma(lb.b, target, acc, state, { aTile, bTile });
    });
    b.expr(cpAsyncWaitGroup(target, 0));

    const ep = args.epilogue !== undefined && !isIdentityEpilogue(args.epilogue.functor) ? args.epilogue : undefined;
    if (ep !== undefined)
      b.comment(
        `epilogue functor: acc = ${ep.functor.activation}(alpha * acc${ep.functor.bias ? ' + bias[n] (loads predicated on n < N)' : ''}) in fp32`,
      );
    b.comment('epilogue: fp32 accumulator → C type, predicated stores on the ragged M/N edge');
    const w = makeTileWindow(block, {
      view: args.c,
      lengths: [P.tileM, P.tileN],
      origin: [m0, n0],
      encoding: blk.cEncoding,
      originAlignment: [P.tileM, P.tileN],
    });
    block.threads((t) => {
      if (ep !== undefined)
        emitGemmEpilogue(t, acc, ep.functor, { alpha: ep.alpha, n: args.n, n0, ...(ep.bias === undefined ? {} : { bias: ep.bias }) });
      storeTile(t, w, acc);
    });
  }

  /**
   * The calling thread's cp.async copies of one operand tile: for each 16-byte access of the copy
   * distribution, the global vector (offset and in-bounds predicate from the tile window walk) goes
   * to the swizzled shared offset of its (mn, k); src-size = 2·min(8, length − start) inside, 0 outside.
   */
  private emitCopy(
    b: BlockBuilder,
    target: Target,
    t: Parameters<Parameters<BlockEmitter['threads']>[0]>[0],
    win: TileWindow,
    enc: TileDistributionEncoding,
    layout: WgmmaSmemLayout,
    dst: Expr,
    length: Expr,
  ): void {
    const ps = emitPartitionIndex(t, enc);
    const view = win.view;
    const traits = emitTileWindowAccesses(t, win, enc, ({ offset, pred, ys }) => {
      const xs = emitXIndex(t, enc, ps, ys);
      const mnk = layout.major === 'K' ? xs : [xs[1]!, xs[0]!];
      const { offset: smemOffset } = emitCalculateOffset(b, layout.descriptor, mnk, t.block.indexEmitter);
      const start = add(win.origin[1]!, xs[1]!);
      const bytes = b.let('src_bytes', uint32, select(pred, cast(mul(minOf(sub(length, start), 8), 2), uint32), 0));
      const src = addressOf(index(view.pointer, select(pred, offset, 0)));
      b.expr(cpAsync(target, { dst: add(dst, mul(smemOffset, 2)), src, bytes: 16, srcBytes: bytes }));
    });
    if (traits.scalarPerVector !== 8 || traits.vectorDimX !== 1) {
      throw new BlockGemmPolicyError(
        'CpAsyncMmaPipeline operand view',
        'must allow 8-element vectors along its contiguous (last) dim: stride 1, length and leading dimension multiples of 8',
        `${traits.scalarPerVector} along X${traits.vectorDimX}`,
      );
    }
  }
}
