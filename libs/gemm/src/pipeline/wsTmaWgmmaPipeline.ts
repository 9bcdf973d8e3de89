import {
  add,
  and,
  bitAnd,
  bitXor,
  cast,
  float32,
  div,
  eq,
  fenceMbarrierInit,
  ge,
  gt,
  int32,
  mbarrierArrive,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierWaitParity,
  minOf,
  mod,
  mul,
  pointer,
  prefetchTensorMap,
  setMaxNReg,
  sharedAddress,
  sub,
  tmaLoad,
  uint8,
  uint32,
  uint64,
  variable,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor, makeTileWindow, storeTile, type TensorView } from '@tilekit/tile';
import { BlockGemmPolicyError, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from '../block/blockGemmWgmmaSs.ts';
import { emitGemmEpilogue, isIdentityEpilogue, type GemmEpilogue } from './gemmEpilogue.ts';

/** Policy of {@link WsTmaWgmmaPipeline}: the block GEMM's shape plus the pipeline's. */
export interface WsTmaWgmmaPolicy extends WgmmaBlockGemmPolicy {
  /** Shared-memory stages of the TMA → wgmma ring: a power of two in [2, 8]. */
  readonly stages: number;
  /** Register budget of the producer warpgroup after `setmaxnreg.dec` (multiple of 8 in [24, 256]). */
  readonly producerRegisters: number;
  /** Register budget of each consumer warpgroup after `setmaxnreg.inc`. */
  readonly consumerRegisters: number;
  /** Grouped rasterization: M tiles per group (consecutive blocks sweep N inside a group of M tiles). */
  readonly groupM: number;
}

/** What the kernel hands the pipeline: its parameters as expressions. */
export interface WsTmaWgmmaArgs {
  /** TMA tensor map of A: dims [K, M] (K innermost), box [tileK, tileM], 128B swizzle, zero fill. */
  readonly aMap: Expr;
  /** TMA tensor map of B stored N×K: dims [K, N], box [tileK, tileN], 128B swizzle, zero fill. */
  readonly bMap: Expr;
  /** `int` problem sizes. */
  readonly m: Expr;
  readonly n: Expr;
  readonly k: Expr;
  /** Batch index (`int`): when given, the tensor maps are rank 3 ([K, M or N, batch]) and it is the third TMA coordinate. */
  readonly batch?: Expr;
  /** The C view (M×N tensor with the kernel's symbols) written by the epilogue (already offset to the batch's matrix). */
  readonly c: TensorView;
  /** Kernel symbols the C descriptor uses (name → `int` expression). */
  readonly symbols: Readonly<Record<string, Expr>>;
  /**
   * The epilogue functor applied to the fp32 accumulator before the cast (default none: the plain
   * cast-and-store, emitted exactly as without this field): C = act(alpha·acc + bias[n]).
   */
  readonly epilogue?: { readonly functor: GemmEpilogue; readonly alpha: Expr; readonly bias?: Expr };
}

/** Name of the kernel's dynamic shared-memory array. */
export const GEMM_DYNAMIC_SMEM = 'tk_gemm_smem';

/**
 * The sm_90a GEMM main loop (CK's `GemmPipeline*` + Hopper habits): warp-specialized, TMA + mbarrier
 * ring, wgmma from shared memory. Threads: `tileM / 64` consumer warpgroups (threads [0, 128·W))
 * then one producer warpgroup.
 * - Partition: grid = ⌈M/tileM⌉·⌈N/tileN⌉ blocks, grouped rasterization by `groupM` M tiles.
 * - Shared memory (dynamic, aligned up to 1024 in the kernel): A stages, B stages, full[S], empty[S].
 * - Producer (`setmaxnreg.dec`): one thread; for each K tile kt, stage s = kt mod S, round r = kt / S:
 *   wait empty[s] phase parity (r & 1) ^ 1 (a fresh barrier passes parity 1), arm full[s] with the
 *   A+B box bytes (`mbarrier.arrive.expect_tx`), issue both TMA box loads onto full[s]. TMA zero-fills
 *   out-of-range rows and the K tail, and counts the full box bytes.
 * - Consumers (`setmaxnreg.inc`): wait full[s] parity r & 1; the block GEMM's wgmmas for the K tile;
 *   `wgmma.wait_group 1` (the previous tile's group is then done), one arrival per consumer warp on
 *   empty[(kt − 1) mod S]; after the loop `wait_group 0`.
 * - Epilogue: the optional functor (`emitGemmEpilogue`: act(alpha·acc + bias[n]) in fp32, in
 *   place), then the fp32 accumulator is stored through a C tile window: each element converted to
 *   C's type, every access predicated on the ragged M/N edge (`storeTile`).
 */
export class WsTmaWgmmaPipeline {
  readonly policy: WsTmaWgmmaPolicy;
  readonly block: WgmmaBlockGemmSs;
  readonly consumerThreads: number;
  /** Threads per block (consumers + the producer warpgroup). */
  readonly threads: number;
  readonly aStageOffset = 0;
  readonly bStageOffset: number;
  readonly barrierOffset: number;
  /** Bytes the kernel uses after aligning its dynamic shared memory to 1024. */
  readonly usedBytes: number;
  /** Dynamic shared memory to request at launch (used bytes + 1024 of alignment slack). */
  readonly sharedBytes: number;
  /** Bytes one stage's TMA loads bring (the full[s] transaction count). */
  readonly stageTxBytes: number;

  constructor(policy: WsTmaWgmmaPolicy) {
    const { stages, producerRegisters: pr, consumerRegisters: cr, groupM } = policy;
    if (!Number.isSafeInteger(stages) || stages < 2 || stages > 8 || (stages & (stages - 1)) !== 0) throw new BlockGemmPolicyError('WsTmaWgmmaPipeline stages', 'must be 2, 4 or 8', String(stages));
    if (!Number.isSafeInteger(groupM) || groupM < 1) throw new BlockGemmPolicyError('WsTmaWgmmaPipeline groupM', 'must be a positive integer', String(groupM));
    this.policy = Object.freeze({ ...policy });
    this.block = new WgmmaBlockGemmSs(policy);
    this.consumerThreads = this.block.threads;
    this.threads = this.consumerThreads + 128;
    for (const [what, r] of [['producerRegisters', pr], ['consumerRegisters', cr]] as const) {
      if (!Number.isSafeInteger(r) || r < 24 || r > 256 || r % 8 !== 0) throw new BlockGemmPolicyError(`WsTmaWgmmaPipeline ${what}`, 'must be a multiple of 8 in [24, 256]', String(r));
    }
    if (pr * 128 + cr * this.consumerThreads > 65536) throw new BlockGemmPolicyError('WsTmaWgmmaPipeline registers', 'producer + consumer budgets must fit the 64K-register file', `${pr}·128 + ${cr}·${this.consumerThreads}`);
    this.bStageOffset = stages * this.block.aTileBytes;
    this.barrierOffset = this.bStageOffset + stages * this.block.bTileBytes;
    this.usedBytes = this.barrierOffset + 2 * stages * 8;
    this.sharedBytes = this.usedBytes + 1024;
    this.stageTxBytes = this.block.aTileBytes + this.block.bTileBytes;
  }

  /** Blocks of the grid (x only) for an M×N problem. */
  gridSize(m: number, n: number): number {
    return Math.ceil(m / this.policy.tileM) * Math.ceil(n / this.policy.tileN);
  }

  /** The block tile (tm, tn) of block `pid`: the same grouped rasterization as the emitted code. */
  tileOf(pid: number, m: number, n: number): [number, number] {
    const tilesM = Math.ceil(m / this.policy.tileM);
    const tilesN = Math.ceil(n / this.policy.tileN);
    const width = this.policy.groupM * tilesN;
    const firstM = Math.floor(pid / width) * this.policy.groupM;
    const rows = Math.min(tilesM - firstM, this.policy.groupM);
    return [firstM + ((pid % width) % rows), Math.floor((pid % width) / rows)];
  }

  /** Emits the whole kernel body into `b` (the entry's block). */
  emit(b: BlockBuilder, target: Target, args: WsTmaWgmmaArgs): void {
    const P = this.policy;
    const S = P.stages;
    const blk = this.block;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    b.comment(`tile partition: ${P.tileM}x${P.tileN} tiles, grouped by ${P.groupM} M tiles`);
    const tilesM = b.let('tiles_m', int32, div(add(args.m, P.tileM - 1), P.tileM));
    const tilesN = b.let('tiles_n', int32, div(add(args.n, P.tileN - 1), P.tileN));
    const pid = b.let('pid', int32, cast(target.blockIdx('x'), int32));
    const width = b.let('group_width', int32, mul(tilesN, P.groupM));
    const firstM = b.let('first_m', int32, mul(div(pid, width), P.groupM));
    const rows = b.let('group_rows', int32, minOf(sub(tilesM, firstM), P.groupM));
    const inGroup = b.let('in_group', int32, mod(pid, width));
    const m0 = b.let('m0', int32, mul(add(firstM, mod(inGroup, rows)), P.tileM));
    const n0 = b.let('n0', int32, mul(div(inGroup, rows), P.tileN));
    const kTiles = b.let('k_tiles', int32, div(add(args.k, P.tileK - 1), P.tileK));

    b.comment(`dynamic shared memory, aligned up to 1024 bytes: ${S} A stages, ${S} B stages, full[${S}], empty[${S}]`);
    // The one declaration without a builder form: an unsized `extern __shared__` array (dynamic shared memory).
    b.verbatim(`extern __shared__ __align__(1024) unsigned char ${GEMM_DYNAMIC_SMEM}[];`);
    const raw = variable(GEMM_DYNAMIC_SMEM, pointer(uint8));
    const rawAddr = b.let('smem_raw', uint32, sharedAddress(target, raw));
    const pad = b.let('smem_pad', uint32, bitAnd(sub(1024, bitAnd(rawAddr, 1023)), 1023));
    const smem = b.let('smem', pointer(uint8), add(raw, pad));
    const smemAddr = b.let('smem_addr', uint32, add(rawAddr, pad));
    const full = b.let('full_bar', pointer(uint64), cast(add(smem, this.barrierOffset), pointer(uint64)));
    const empty = b.let('empty_bar', pointer(uint64), cast(add(smem, this.barrierOffset + 8 * S), pointer(uint64)));

    b.if(eq(tid, 0), (t) => {
      t.forRange({ name: 's', to: S, unroll: true }, (l, s) => {
        l.expr(mbarrierInit(target, add(full, s), 1));
        l.expr(mbarrierInit(target, add(empty, s), this.consumerThreads / 32));
      });
      t.expr(fenceMbarrierInit(target));
    });
    b.push(target.syncThreads());

    const stageOf = (bb: BlockBuilder, kt: Expr): { s: Expr; parity: Expr } => ({
      s: bb.let('s', int32, bitAnd(kt, S - 1)),
      parity: bb.let('parity', uint32, cast(bitAnd(div(kt, S), 1), uint32)),
    });

    b.if(
      ge(tid, this.consumerThreads),
      (prod) => {
        prod.comment(`producer warpgroup: registers down to ${P.producerRegisters}; one thread issues every TMA load`);
        prod.expr(setMaxNReg(target, 'dec', P.producerRegisters));
        prod.if(eq(tid, this.consumerThreads), (one) => {
          one.expr(prefetchTensorMap(target, args.aMap));
          one.expr(prefetchTensorMap(target, args.bMap));
          one.forRange({ name: 'kt', to: kTiles }, (l, kt) => {
            const { s, parity } = stageOf(l, kt);
            l.expr(mbarrierWaitParity(target, add(empty, s), bitXor(parity, 1)));
            l.expr(mbarrierArriveExpectTx(target, add(full, s), this.stageTxBytes));
            const k0 = l.let('k0', int32, mul(kt, P.tileK));
            l.expr(tmaLoad(target, { dst: add(smem, add(this.aStageOffset, mul(s, blk.aTileBytes))), map: args.aMap, bar: add(full, s), coords: args.batch === undefined ? [k0, m0] : [k0, m0, args.batch] }));
            l.expr(tmaLoad(target, { dst: add(smem, add(this.bStageOffset, mul(s, blk.bTileBytes))), map: args.bMap, bar: add(full, s), coords: args.batch === undefined ? [k0, n0] : [k0, n0, args.batch] }));
          });
        });
      },
      (cons) => {
        cons.comment(`${blk.warpgroups} consumer warpgroup(s): registers up to ${P.consumerRegisters}; wgmma m64n${P.tileN}k16 from shared memory`);
        cons.expr(setMaxNReg(target, 'inc', P.consumerRegisters));
        const block = new BlockEmitter(cons, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } });
        const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
        // No zeroing: the first K tile's first wgmma has scale-d 0 (k ≥ 1, so there is a first tile).
        const wg = cons.let('warpgroup', int32, div(tid, 128));
        cons.forRange({ name: 'kt', to: kTiles }, (l, kt) => {
          const { s, parity } = stageOf(l, kt);
          l.expr(mbarrierWaitParity(target, add(full, s), parity));
          const aTile = l.let('a_tile', uint32, add(smemAddr, cast(add(this.aStageOffset, mul(s, blk.aTileBytes)), uint32)));
          const bTile = l.let('b_tile', uint32, add(smemAddr, cast(add(this.bStageOffset, mul(s, blk.bTileBytes)), uint32)));
          blk.emitMma(l, target, acc, { aTile, bTile, warpgroup: wg, accumulate: cast(gt(kt, 0), int32) });
          blk.emitWait(l, target, acc, 1);
          l.if(and(gt(kt, 0), eq(bitAnd(tid, 31), 0)), (r) => {
            r.expr(mbarrierArrive(target, add(empty, bitAnd(sub(kt, 1), S - 1))));
          });
        });
        blk.emitWait(cons, target, acc, 0);
        const ep = args.epilogue !== undefined && !isIdentityEpilogue(args.epilogue.functor) ? args.epilogue : undefined;
        if (ep !== undefined) cons.comment(`epilogue functor: acc = ${ep.functor.activation}(alpha * acc${ep.functor.bias ? ' + bias[n] (loads predicated on n < N)' : ''}) in fp32`);
        cons.comment('epilogue: fp32 accumulator → C type, predicated stores on the ragged M/N edge');
        const w = makeTileWindow(block, { view: args.c, lengths: [P.tileM, P.tileN], origin: [m0, n0], encoding: blk.cEncoding, originAlignment: [P.tileM, P.tileN] });
        block.threads((t) => {
          if (ep !== undefined) emitGemmEpilogue(t, acc, ep.functor, { alpha: ep.alpha, n: args.n, n0, ...(ep.bias === undefined ? {} : { bias: ep.bias }) });
          storeTile(t, w, acc);
        });
      },
    );
  }
}
