import {
  checkSetMaxNRegBudget,
  add,
  declareAlignedDynamicShared,
  assignStmt,
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
  lt,
  mbarrierArriveWarp,
  mbarrierArriveExpectTx,
  mbarrierInit,
  mbarrierWaitParity,
  mul,
  pointer,
  prefetchTensorMap,
  setMaxNReg,
  sub,
  tmaLoad,
  uint32,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor, makeTileWindow, storeTile, type TensorView } from '@tilekit/tile';
import { BlockGemmPolicyError, WgmmaBlockGemmSs, type WgmmaBlockGemmPolicy } from '../block/blockGemmWgmmaSs.ts';
import type { OperandMajor, WgmmaSmemLayout } from '../smemLayouts.ts';
import { emitGemmEpilogue, isIdentityEpilogue, type GemmEpilogue } from './gemmEpilogue.ts';
import { GroupedTilePartitioner } from './groupedTilePartitioner.ts';

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
  /**
   * Persistent tile scheduling (default false: one block per tile, the code exactly as without this
   * field). True: launch at most one block per SM (`persistentGridSize`); block x computes tiles
   * x, x + gridDim.x, … (each through the same grouped rasterization), producer and consumers
   * walking the same sequence with the mbarrier ring's stages and phases continuing across tiles,
   * and the consumers release a tile's last stage before its epilogue, so the next tile's loads
   * overlap the stores.
   */
  readonly persistent?: boolean;
}

/**
 * How the producer fills one operand's shared-memory stage with TMA box loads (128B swizzle, zero
 * fill). K-major: one box [tileK, tileMN] (dimension 0 innermost) at coordinates [k0, mn0]. MN-major:
 * the 128B swizzle limits a box's inner extent to 128 bytes, so `count` = tileMN / 64 boxes
 * [64, tileK], load j at coordinates [mn0 + 64·j, k0] into the stage + j · `bytesPerLoad` (the
 * layout's slab stride, its LBO). Postcondition (tested): the bytes the loads write are the layout's.
 */
export interface TmaOperandLoads {
  readonly major: OperandMajor;
  /** Box dims, innermost first: [tileK, tileMN] (K-major) or [64, tileK] (MN-major). */
  readonly box: readonly [number, number];
  /** Box loads per stage. */
  readonly count: number;
  /** Shared-memory bytes each load fills (consecutive loads are adjacent). */
  readonly bytesPerLoad: number;
  /** M/N elements between the coordinates of consecutive loads (0 when there is one). */
  readonly mnStep: number;
}

/** The TMA loads that fill a 128B-swizzled operand tile laid out by `makeWgmmaSmemLayout`. */
export function tmaOperandLoads(layout: WgmmaSmemLayout): TmaOperandLoads {
  if (layout.swizzle !== '128B')
    throw new BlockGemmPolicyError('tmaOperandLoads layout', "must use the 128B swizzle (the pipeline's TMA maps)", layout.swizzle);
  if (layout.major === 'K') return { major: 'K', box: [layout.k, layout.mn], count: 1, bytesPerLoad: layout.bytes, mnStep: 0 };
  const slab = layout.swizzleBytes / layout.elementBytes;
  const count = layout.mn / slab;
  return { major: 'MN', box: [slab, layout.k], count, bytesPerLoad: layout.bytes / count, mnStep: count > 1 ? slab : 0 };
}

/** What the kernel hands the pipeline: its parameters as expressions. */
export interface WsTmaWgmmaArgs {
  /**
   * TMA tensor map of A. K-major (row-major M×K): dims [K, M] (K innermost), box [tileK, tileM].
   * M-major (column-major M×K): dims [M, K], box [64, tileK] (see {@link TmaOperandLoads}). 128B
   * swizzle, zero fill.
   */
  readonly aMap: Expr;
  /** TMA tensor map of B: K-major (stored N×K) dims [K, N], box [tileK, tileN]; N-major (stored K×N) dims [N, K], box [64, tileK]. */
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
 * - Partition: grid = ⌈M/tileM⌉·⌈N/tileN⌉ blocks, grouped rasterization by `groupM` M tiles; or,
 *   with `persistent`, at most one block per SM walking tiles x, x + gridDim.x, … (see the policy field).
 * - Shared memory (dynamic, aligned up to 1024 in the kernel): A stages, B stages, full[S], empty[S].
 * - Producer (`setmaxnreg.dec`): one thread; for each K tile kt, stage s = kt mod S, round r = kt / S:
 *   wait empty[s] phase parity (r & 1) ^ 1 (a fresh barrier passes parity 1), arm full[s] with the
 *   A+B box bytes (`mbarrier.arrive.expect_tx`), issue the TMA box loads onto full[s] (one per
 *   K-major operand, one per 64-wide slab of an MN-major one: {@link tmaOperandLoads}). TMA
 *   zero-fills out-of-range rows and the K tail, and counts the full box bytes.
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
  /** How the producer loads A and B (one box per operand when K-major, 64-wide slabs when MN-major). */
  readonly aLoads: TmaOperandLoads;
  readonly bLoads: TmaOperandLoads;
  /** The grouped rasterization of block tiles (shared with the sm_80 pipeline). */
  readonly partitioner: GroupedTilePartitioner;

  constructor(policy: WsTmaWgmmaPolicy) {
    const { stages, producerRegisters: pr, consumerRegisters: cr, groupM } = policy;
    if (!Number.isSafeInteger(stages) || stages < 2 || stages > 8 || (stages & (stages - 1)) !== 0)
      throw new BlockGemmPolicyError('WsTmaWgmmaPipeline stages', 'must be 2, 4 or 8', String(stages));
    if (!Number.isSafeInteger(groupM) || groupM < 1)
      throw new BlockGemmPolicyError('WsTmaWgmmaPipeline groupM', 'must be a positive integer', String(groupM));
    if (policy.persistent !== undefined && typeof policy.persistent !== 'boolean')
      throw new BlockGemmPolicyError('WsTmaWgmmaPipeline persistent', 'must be a boolean', String(policy.persistent));
    this.policy = Object.freeze({ ...policy });
    this.partitioner = new GroupedTilePartitioner(policy, 'WsTmaWgmmaPipeline');
    this.block = new WgmmaBlockGemmSs(policy);
    this.consumerThreads = this.block.threads;
    this.threads = this.consumerThreads + 128;
    for (const [what, r] of [
      ['producerRegisters', pr],
      ['consumerRegisters', cr],
    ] as const) {
      if (!Number.isSafeInteger(r) || r < 24 || r > 256 || r % 8 !== 0)
        throw new BlockGemmPolicyError(`WsTmaWgmmaPipeline ${what}`, 'must be a multiple of 8 in [24, 256]', String(r));
    }
    checkSetMaxNRegBudget(this.threads, pr, cr, (rule, found) => {
      throw new BlockGemmPolicyError('WsTmaWgmmaPipeline registers', rule, found);
    });
    this.bStageOffset = stages * this.block.aTileBytes;
    this.barrierOffset = this.bStageOffset + stages * this.block.bTileBytes;
    this.usedBytes = this.barrierOffset + 2 * stages * 8;
    this.sharedBytes = this.usedBytes + 1024;
    this.stageTxBytes = this.block.aTileBytes + this.block.bTileBytes;
    this.aLoads = tmaOperandLoads(this.block.aLayout);
    this.bLoads = tmaOperandLoads(this.block.bLayout);
  }

  /** Blocks of the grid (x only) for an M×N problem. */
  gridSize(m: number, n: number): number {
    return this.partitioner.gridSize(m, n);
  }

  /**
   * Persistent mode: blocks along x for an M×N problem on `sms` SMs with `batch` matrices along y —
   * every tile gets a block while there are no more tiles than SMs; otherwise the SMs are shared out
   * among the batch (at least one block per matrix).
   */
  persistentGridSize(m: number, n: number, sms: number, batch = 1): number {
    if (!Number.isSafeInteger(sms) || sms < 1)
      throw new BlockGemmPolicyError('WsTmaWgmmaPipeline.persistentGridSize sms', 'must be a positive integer', String(sms));
    return Math.min(this.gridSize(m, n), Math.max(1, Math.floor(sms / batch)));
  }

  /**
   * Persistent mode: the block tiles (tm, tn) block `block` of `blocks` computes, in order: tiles
   * block, block + blocks, … through {@link tileOf} (the emitted loop's TS twin). Postcondition
   * (property-tested): over all blocks, every tile exactly once.
   */
  persistentTiles(block: number, blocks: number, m: number, n: number): [number, number][] {
    const out: [number, number][] = [];
    for (let t = block; t < this.gridSize(m, n); t += blocks) out.push(this.tileOf(t, m, n));
    return out;
  }

  /** The block tile (tm, tn) of block `pid`: the same grouped rasterization as the emitted code. */
  tileOf(pid: number, m: number, n: number): [number, number] {
    return this.partitioner.tileOf(pid, m, n);
  }

  /** Emits the whole kernel body into `b` (the entry's block). */
  emit(b: BlockBuilder, target: Target, args: WsTmaWgmmaArgs): void {
    const P = this.policy;
    const S = P.stages;
    const blk = this.block;
    const persistent = P.persistent === true;
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, this.threads - 1] });

    // The grouped rasterization of tile `pid` (the twin of `tileOf`), as lets in `bb`.
    const part = this.partitioner;
    const tileOrigin = (bb: BlockBuilder, pid: Expr, width: Expr, tilesM: Expr) => part.emitTileOrigin(bb, pid, width, tilesM);

    let m0: Expr | undefined;
    let n0: Expr | undefined;
    let tilesM: Expr;
    let width: Expr;
    let totalTiles: Expr | undefined;
    if (!persistent) {
      b.comment(`tile partition: ${P.tileM}x${P.tileN} tiles, grouped by ${P.groupM} M tiles`);
      let tilesN: Expr;
      ({ tilesM, tilesN } = part.emitTileCounts(b, args.m, args.n));
      const pid = b.let('pid', int32, cast(target.blockIdx('x'), int32));
      width = part.emitGroupWidth(b, tilesN);
      ({ m0, n0 } = tileOrigin(b, pid, width, tilesM));
    } else {
      b.comment(
        `persistent tile partition: ${P.tileM}x${P.tileN} tiles, grouped by ${P.groupM} M tiles; block x walks tiles x, x + gridDim.x, …`,
      );
      let tilesN: Expr;
      ({ tilesM, tilesN } = part.emitTileCounts(b, args.m, args.n));
      width = part.emitGroupWidth(b, tilesN);
      totalTiles = b.let('total_tiles', int32, mul(tilesM, tilesN));
    }
    const kTiles = b.let('k_tiles', int32, div(add(args.k, P.tileK - 1), P.tileK));

    b.comment(`dynamic shared memory, aligned up to 1024 bytes: ${S} A stages, ${S} B stages, full[${S}], empty[${S}]`);
    const { smem, smemAddr } = declareAlignedDynamicShared(b, target, GEMM_DYNAMIC_SMEM);
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

    // Persistent: every role walks the same tiles; `done` counts the K tiles of the earlier ones, so
    // the ring's stage and phase continue across tiles (K tile kt of a tile is ring step done + kt).
    const forEachTile = (bb: BlockBuilder, body: (tb: BlockBuilder, origin: { m0: Expr; n0: Expr }, done: Expr) => void): void => {
      const done = bb.var('done', int32, 0);
      bb.for(
        { name: 'tile', type: int32, value: cast(target.blockIdx('x'), int32) },
        (v) => lt(v!, totalTiles!),
        (v) => assignStmt(v!, cast(target.gridDim('x'), int32), '+='),
        (tb, v) => {
          body(tb, tileOrigin(tb, v!, width, tilesM), done);
          tb.assign(done, kTiles, '+=');
        },
      );
    };

    const producerKLoop = (bb: BlockBuilder, origin: { m0: Expr; n0: Expr }, done: Expr | null): void => {
      bb.forRange({ name: 'kt', to: kTiles }, (l, kt) => {
        const { s, parity } = stageOf(l, done === null ? kt : l.let('step', int32, add(done, kt)));
        l.expr(mbarrierWaitParity(target, add(empty, s), bitXor(parity, 1)));
        l.expr(mbarrierArriveExpectTx(target, add(full, s), this.stageTxBytes));
        const k0 = l.let('k0', int32, mul(kt, P.tileK));
        const load = (loads: TmaOperandLoads, stageOffset: number, tileBytes: number, map: Expr, mn0: Expr): void => {
          const batched = (coords: Expr[]): Expr[] => (args.batch === undefined ? coords : [...coords, args.batch]);
          const stage = add(stageOffset, mul(s, tileBytes));
          if (loads.major === 'K') {
            l.expr(tmaLoad(target, { dst: add(smem, stage), map, bar: add(full, s), coords: batched([k0, mn0]) }));
            return;
          }
          for (let j = 0; j < loads.count; j++) {
            const dst = j === 0 ? add(smem, stage) : add(smem, add(stage, j * loads.bytesPerLoad));
            l.expr(tmaLoad(target, { dst, map, bar: add(full, s), coords: batched([j === 0 ? mn0 : add(mn0, j * loads.mnStep), k0]) }));
          }
        };
        load(this.aLoads, this.aStageOffset, blk.aTileBytes, args.aMap, origin.m0);
        load(this.bLoads, this.bStageOffset, blk.bTileBytes, args.bMap, origin.n0);
      });
    };

    b.if(
      ge(tid, this.consumerThreads),
      (prod) => {
        prod.comment(`producer warpgroup: registers down to ${P.producerRegisters}; one thread issues every TMA load`);
        prod.expr(setMaxNReg(target, 'dec', P.producerRegisters));
        prod.if(eq(tid, this.consumerThreads), (one) => {
          one.expr(prefetchTensorMap(target, args.aMap));
          one.expr(prefetchTensorMap(target, args.bMap));
          if (!persistent) producerKLoop(one, { m0: m0!, n0: n0! }, null);
          else forEachTile(one, (tb, origin, done) => producerKLoop(tb, origin, done));
        });
      },
      (cons) => {
        cons.comment(
          `${blk.warpgroups} consumer warpgroup(s): registers up to ${P.consumerRegisters}; wgmma m64n${P.tileN}k16 from shared memory`,
        );
        cons.expr(setMaxNReg(target, 'inc', P.consumerRegisters));
        const block = new BlockEmitter(cons, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } });
        const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
        // No zeroing: the first K tile's first wgmma has scale-d 0 (k ≥ 1, so there is a first tile).
        const wg = cons.let('warpgroup', int32, div(tid, 128));
        const consumerTile = (bb: BlockBuilder, tileBlock: BlockEmitter, origin: { m0: Expr; n0: Expr }, done: Expr | null): void => {
          bb.forRange({ name: 'kt', to: kTiles }, (l, kt) => {
            const step = done === null ? kt : l.let('step', int32, add(done, kt));
            const { s, parity } = stageOf(l, step);
            l.expr(mbarrierWaitParity(target, add(full, s), parity));
            const aTile = l.let('a_tile', uint32, add(smemAddr, cast(add(this.aStageOffset, mul(s, blk.aTileBytes)), uint32)));
            const bTile = l.let('b_tile', uint32, add(smemAddr, cast(add(this.bStageOffset, mul(s, blk.bTileBytes)), uint32)));
            blk.emitMma(l, target, acc, { aTile, bTile, warpgroup: wg, accumulate: cast(gt(kt, 0), int32) });
            blk.emitWait(l, target, acc, 1);
            l.if(gt(kt, 0), (r) => {
              r.expr(mbarrierArriveWarp(target, add(empty, bitAnd(sub(step, 1), S - 1))));
            });
          });
          blk.emitWait(bb, target, acc, 0);
          if (done !== null) {
            // The tile's last stage is free once its wgmmas are done: release it before the epilogue, so
            // the producer fills it with the next tile's data while this one is stored.
            bb.expr(mbarrierArriveWarp(target, add(empty, bitAnd(sub(add(done, kTiles), 1), S - 1))));
          }
          const ep = args.epilogue !== undefined && !isIdentityEpilogue(args.epilogue.functor) ? args.epilogue : undefined;
          if (ep !== undefined)
            bb.comment(
              `epilogue functor: acc = ${ep.functor.activation}(alpha * acc${ep.functor.bias ? ' + bias[n] (loads predicated on n < N)' : ''}) in fp32`,
            );
          bb.comment('epilogue: fp32 accumulator → C type, predicated stores on the ragged M/N edge');
          const w = makeTileWindow(tileBlock, {
            view: args.c,
            lengths: [P.tileM, P.tileN],
            origin: [origin.m0, origin.n0],
            encoding: blk.cEncoding,
            originAlignment: [P.tileM, P.tileN],
          });
          tileBlock.threads((t) => {
            if (ep !== undefined)
              emitGemmEpilogue(t, acc, ep.functor, {
                alpha: ep.alpha,
                n: args.n,
                n0: origin.n0,
                ...(ep.bias === undefined ? {} : { bias: ep.bias }),
              });
            storeTile(t, w, acc);
          });
        };
        if (!persistent) consumerTile(cons, block, { m0: m0!, n0: n0! }, null);
        else
          forEachTile(cons, (tb, origin, done) =>
            consumerTile(
              tb,
              new BlockEmitter(tb, target, { numThreads: this.consumerThreads, index: { symbols: args.symbols } }, block),
              origin,
              done,
            ),
          );
      },
    );
  }
}
