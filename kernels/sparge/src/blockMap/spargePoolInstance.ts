// Sparge's pooling kernel (stage 1 of the block map, upstream's fused pool/sim/quant Triton kernel):
// one block per (block of rows, head, batch) of Q or K. It loads the block's rows once (16-byte
// vectors), subtracts the K mean when given, and computes in fp32 the mean over the block's real
// rows, the self-similarity ‖Σ x̂ᵢ‖²/rows² (x̂ = x/‖x‖, a zero row counts 0) and, when the int8
// outputs are given, the per-block int8 quantization (scale = fp32(max|x|/127) + 1e-7, round half
// away from zero) from the same registers.
import {
  add,
  bool,
  cast,
  call,
  div,
  eq,
  f32,
  float32,
  ge,
  gt,
  index,
  instanceKey,
  int32,
  int64,
  int8,
  kernelParam,
  KernelInstance,
  lit,
  lt,
  maxOf,
  minOf,
  mul,
  ne,
  select,
  sm90a,
  type SourceBuilder,
  sub,
  and,
  type Target,
} from '@tilekit/codegen';
import { emitRowTileSequence } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { ArgumentError, getDType } from '@tilekit/numeric';
import {
  blockTileReduce,
  BlockEmitter,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  reduceEncoding,
  reduceMax,
  reduceSum,
  storeTile,
  sweepTile,
  tileElementwise,
} from '@tilekit/tile';
import {
  emitLaneButterfly,
  emitWarpColumnRows,
  emitWarpLane,
  makeSpargeColumnTile,
  spargeColumnEncoding,
  spargeColumnIndexOf,
  sumWarpRows,
  tidIn,
} from './spargePoolReduce.ts';
import {
  checkSpargeRowPolicy,
  SPARGE_POOL_BLOCK_ROWS,
  SPARGE_POOL_MAX_ROWS,
  SPARGE_POOL_THREADS,
  SPARGE_POOL_VECTOR,
  spargeSharedBytes,
  type SpargePoolDType,
  type SpargeRowKernelLaunch,
} from './spargePoolPolicy.ts';
import { spargePoolTile, type SpargePoolTile } from './spargePoolTile.ts';

/** The Policy of one pooling instance. */
export interface SpargePoolPolicy {
  readonly dtype: SpargePoolDType;
  readonly headDim: number;
  /** Rows per pooled block (blockQ for Q, blockK for K). */
  readonly blockRows: number;
}

function poolParams(policy: SpargePoolPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const big = { range: [0, 2 ** 50] as const };
  return {
    x: kernelParam.pointer(element, { const: true, align: 16 }),
    x_stride_row: kernelParam.i32({ range: [SPARGE_POOL_VECTOR, SPARGE_POOL_MAX_ROWS] }),
    x_stride_head: kernelParam.i64(big),
    x_stride_batch: kernelParam.i64(big),
    /** fp32 [batch][heads][headDim] subtracted before pooling (K smoothing); null: nothing subtracted. */
    mean: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
    pooled: kernelParam.pointer(float32, { align: 4 }),
    sim: kernelParam.pointer(float32, { align: 4 }),
    /** int8 [batches][heads][rows_total][headDim]; null: no quantization. */
    x8: kernelParam.pointer(int8, { align: 8, nullable: true }),
    scale: kernelParam.pointer(float32, { align: 4, nullable: true }),
    heads: kernelParam.i32({ range: [1, 65535] }),
    blocks_max: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
    rows_total: kernelParam.i32({ range: [0, SPARGE_POOL_MAX_ROWS] }),
    seqlen: kernelParam.i32({ range: [0, SPARGE_POOL_MAX_ROWS] }),
    seqstart: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    /** 1: a partial tail block's similarity is NaN (upstream's 0/0, tailBlockRule 'upstreamFix'). */
    tail_nan: kernelParam.i32({ range: [0, 1] }),
  };
}

type PoolParams = ReturnType<typeof poolParams>;

/**
 * One pooling kernel. Block (blk, head, b) covers rows [blk·B, blk·B + B) of sequence b (batch mode:
 * `seqlen` rows at x + b·x_stride_batch; group mode: rows [seqstart[b], seqstart[b + 1]) of the one
 * batch) of head `head`, `rows` = its real rows. It writes, at i = (b·heads + head)·blocks_max + blk:
 * - pooled[i·d + c] = (1/rows)·Σ_r x[r][c] with x = X − mean[(b·heads + head)·d + c] (no mean: X);
 * - sim[i] = ‖Σ_r x̂_r‖² / rows², x̂ = x·rsqrt(‖x‖²) (0 for a zero row); NaN when tail_nan and rows < B;
 * - int8 (x8 non-null): scale[i] = fp32(max|x|/127) + 1e-7 and x8[(b8·heads + head)·rows_total +
 *   row][c] = trunc(y + ½·sign(y)), y = x/scale (b8 = 0 in group mode, row global);
 * - a block wholly past the sequence's end writes pooled = 0, sim = 0, scale = 0 and no int8 rows.
 * Strides are element strides, multiples of 8 (16-byte vectors). All sums are fp32 in a fixed order.
 * Postcondition (GPU spec): equals `spargePoolBlocks` / `spargeQuantizeBlocksInt8` within fp32 rounding.
 */
export class SpargePoolInstance extends KernelInstance<SpargePoolPolicy, PoolParams> {
  readonly tile: SpargePoolTile;
  protected readonly sourceHeader = { title: 'sparge block-map pooling', generator: '@tilekit/kernel-sparge' };

  constructor(policy: SpargePoolPolicy, target: Target = sm90a) {
    checkSpargeRowPolicy(policy);
    if (!(SPARGE_POOL_BLOCK_ROWS as readonly number[]).includes(policy.blockRows))
      throw new ArgumentError('policy.blockRows', `must be one of ${SPARGE_POOL_BLOCK_ROWS.join(', ')}`, policy.blockRows);
    const threads = SPARGE_POOL_THREADS;
    const key = instanceKey(
      'sparge_pool',
      { dtype: policy.dtype, hdim: policy.headDim, rows: policy.blockRows, threads, target: target.name },
      { tags: { dtype: '', hdim: 'd', rows: 'b', threads: 't' } },
    );
    const frozen = Object.freeze({ ...policy });
    const warps = threads / 32;
    const staticSharedBytes = spargeSharedBytes([warps * policy.headDim, warps * policy.headDim, warps, policy.headDim / 32]);
    super({ key, policy: frozen, target, params: poolParams(frozen, target), threads, staticSharedBytes });
    this.tile = spargePoolTile({ rows: policy.blockRows, cols: policy.headDim, vectorLength: SPARGE_POOL_VECTOR, threads });
  }

  /** Grid for `batch` sequences, `heads` heads and `blocksMax` blocks per sequence. */
  launch(batch: number, heads: number, blocksMax: number): SpargeRowKernelLaunch {
    return { grid: [Math.max(1, blocksMax), heads, batch], block: [this.threads, 1, 1], sharedBytes: 0 };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const tile = this.tile;
    const enc = tile.encoding;
    const B = P.blockRows;
    const D = P.headDim;
    const warps = tile.warps;
    const rowsSym = symbol('block_rows', { max: B });
    const strideSym = symbol('x_stride_row', { max: SPARGE_POOL_MAX_ROWS });
    const xDesc = makeNaiveTensorDescriptor([rowsSym, D], [strideSym, 1], { vectorLength: SPARGE_POOL_VECTOR });
    const x8Desc = makeNaiveTensorDescriptor([rowsSym, D], [D, 1], { vectorLength: SPARGE_POOL_VECTOR });
    const element = t.dtypeType(P.dtype);
    const columns = spargeColumnEncoding(tile);
    const rowsRed = reduceEncoding(enc, [1]);
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 2 } }, (b, a) => {
      const blk = b.let('blk', int32, cast(t.blockIdx('x'), int32));
      // Blocks past a sequence's end still write their zeros below, so the prologue does not return.
      const {
        head,
        batch,
        group,
        rowStart,
        seqlen,
        m0: r0,
      } = emitRowTileSequence(b, t, { tileRows: B, seqlen: a.seqlen, seqstart: a.seqstart, returnPastEnd: false });
      const out = b.let(
        'out_block',
        int64,
        add(mul(add(mul(cast(batch, int64), a.heads), cast(head, int64)), cast(a.blocks_max, int64)), cast(blk, int64)),
      );
      const quant = b.let('quantize', bool, ne(select(a.x8, 1, 0), 0));
      const tid0 = b.let('tid0', int32, cast(t.threadIdx('x'), int32), { range: [0, this.threads - 1] });
      b.comment("a block past the sequence's end: pooled = 0, sim = 0, scale = 0 (never read by the selection)");
      b.if(ge(r0, seqlen), (e) => {
        e.if(lt(tid0, D), (s) => s.assign(index(a.pooled, add(mul(out, D), cast(tid0, int64))), f32(0)));
        e.if(eq(tid0, 0), (s) => {
          s.assign(index(a.sim, out), f32(0));
          s.if(ne(select(a.scale, 1, 0), 0), (q) => q.assign(index(a.scale, out), f32(0)));
        });
        e.return();
      });
      const rows = b.let('rows', int32, minOf(B, sub(seqlen, r0)));
      const mapBatch = b.let('b_off', int64, cast(select(group, 0, batch), int64));
      const firstRow = b.let('first_row', int64, cast(add(rowStart, r0), int64));
      const xBase = b.let(
        'x_base',
        a.x.type,
        add(
          a.x,
          add(add(mul(mapBatch, a.x_stride_batch), mul(cast(head, int64), a.x_stride_head)), mul(firstRow, cast(a.x_stride_row, int64))),
        ),
      );
      const meanOn = b.let('mean_on', bool, ne(select(a.mean, 1, 0), 0));
      const meanBase = b.let('mean_base', int64, mul(add(mul(cast(batch, int64), a.heads), cast(head, int64)), D));
      const block = new BlockEmitter(b, t, {
        numThreads: this.threads,
        index: { symbols: { block_rows: rows, x_stride_row: a.x_stride_row } },
      });
      const raw = makeDistributedTensor(block, 'x_raw', enc, element);
      const xf = makeDistributedTensor(block, 'x_f32', enc, float32);
      const sq = makeDistributedTensor(block, 'x_sq', enc, float32);
      const meanCols = makeSpargeColumnTile(block, 'mean_col', tile, float32);
      const sumX = makeSpargeColumnTile(block, 'sum_x', tile, float32);
      const sumXh = makeSpargeColumnTile(block, 'sum_xhat', tile, float32);
      const amax = block.registers('amax', float32, 1);
      const xWindow = makeTileWindow(block, {
        view: makeTensorView(xBase, xDesc, { elementBytes: getDType(P.dtype).bytes }),
        lengths: [B, D],
        origin: [0, 0],
        encoding: enc,
        fixedOrigin: true,
      });
      b.comment("the block's rows (rows past the sequence read as 0), minus the mean; rows past the end stay 0");
      block.threads((th) => {
        loadTile(th, xWindow, raw);
        sweepTile(th, meanCols, (e) => e.b.assign(e.value, select(meanOn, index(a.mean, add(meanBase, cast(e.x[0]!, int64))), f32(0))));
        sweepTile(th, raw, (e) => {
          const v = sub(cast(e.value, float32), meanCols.at(th, spargeColumnIndexOf(tile, columns, e.d)));
          e.b.assign(xf.at(th, e.d), select(lt(e.x[0]!, rows), v, f32(0)));
        });
        tileElementwise(th, sq, [xf], ([v]) => mul(v!, v!));
      });
      b.comment("row norms: in-thread, then a butterfly over the row's lanes");
      const norm2 = blockTileReduce(block, 'row_norm2', sq, [1], reduceSum);
      block.threads((th) => {
        const inv = Array.from({ length: norm2.size }, (_, r) =>
          th.b.let(
            'inv_norm',
            float32,
            select(gt(norm2.at(th, r), f32(0)), call('rsqrtf', [norm2.at(th, r)], float32, { pure: true }), f32(0)),
          ),
        );
        th.b.assign(amax.at(th, 0), f32(0));
        for (let c = 0; c < sumX.size; c++) {
          th.b.assign(sumX.at(th, c), f32(0));
          th.b.assign(sumXh.at(th, c), f32(0));
        }
        // Rows in M0 order, then columns: the fixed in-thread summation order.
        for (let d = 0; d < xf.size; d++) {
          const ys = enc.calculateYIndex(d);
          const r = rowsRed.encoding.calculateD(rowsRed.keptYs.map((y) => ys[y]!));
          const c = spargeColumnIndexOf(tile, columns, d);
          const v = xf.at(th, d);
          th.b.assign(sumX.at(th, c), add(sumX.at(th, c), v));
          th.b.assign(sumXh.at(th, c), add(sumXh.at(th, c), mul(v, inv[r]!)));
          th.b.assign(amax.at(th, 0), maxOf(amax.at(th, 0), call('fabsf', [v], float32, { pure: true })));
        }
      });
      const smemX = block.shared('pool_sum_x', float32, warps * D);
      const smemXh = block.shared('pool_sum_xhat', float32, warps * D);
      const smemMax = block.shared('pool_amax', float32, warps);
      const smemSim = block.shared('pool_sim', float32, D / 32);
      block.threads((th) => {
        emitWarpColumnRows(th, tile, [sumX, sumXh], [smemX, smemXh], reduceSum);
        emitLaneButterfly(th, t, amax.at(th, 0), 1, block.warpSize, reduceMax);
        const { warp, lane } = emitWarpLane(th);
        th.b.if(eq(lane, 0), (w) => w.assign(index(smemMax, warp), amax.at(th, 0)));
      });
      block.sync();
      b.comment("warp rows summed in warp order: pooled by threads [0, d), the similarity's squares by threads [d, 2d)");
      block.threads((th) => {
        th.b.if(lt(th.tid, D), (s) => {
          const sum = sumWarpRows({ ...th, b: s }, smemX, warps, D, th.tid, reduceSum);
          s.assign(index(a.pooled, add(mul(out, D), cast(th.tid, int64))), div(sum, cast(rows, float32)));
        });
        th.b.if(tidIn(th, D, 2 * D), (s) => {
          const scope = { ...th, b: s };
          const col = s.let('col', int32, sub(th.tid, D));
          const total = sumWarpRows(scope, smemXh, warps, D, col, reduceSum);
          const sq2 = s.declare('sim_part', float32, mul(total, total), { storage: 'mutable' });
          emitLaneButterfly(scope, t, sq2, 1, block.warpSize, reduceSum);
          const { warp, lane } = emitWarpLane(scope);
          s.if(eq(lane, 0), (w) => w.assign(index(smemSim, sub(warp, D / 32)), sq2));
        });
        th.b.assign(amax.at(th, 0), sumWarpRows(th, smemMax, warps, 1, lit(0, int32), reduceMax));
      });
      block.sync();
      const x8 = makeDistributedTensor(block, 'x_int8', enc, int8);
      // Packed bhsd int8 rows: (b8·heads + head)·rows_total + the block's first row (null x8: never stored).
      const x8Base = b.let(
        'x8_base',
        a.x8.type,
        add(a.x8, mul(add(mul(add(mul(mapBatch, a.heads), cast(head, int64)), cast(a.rows_total, int64)), firstRow), D)),
      );
      const x8Window = makeTileWindow(block, {
        view: makeTensorView(x8Base, x8Desc, { elementBytes: 1 }),
        lengths: [B, D],
        origin: [0, 0],
        encoding: enc,
        fixedOrigin: true,
      });
      block.threads((th) => {
        const scale = th.b.let('scale', float32, add(div(amax.at(th, 0), f32(127)), f32(1e-7)));
        th.b.if(eq(th.tid, 0), (s) => {
          const total = sumWarpRows({ ...th, b: s }, smemSim, D / 32, 1, lit(0, int32), reduceSum);
          const rf = s.let('rows_f', float32, cast(rows, float32));
          const nan = call('__int_as_float', [lit(0x7fc00000, int32)], float32, { pure: true });
          s.assign(index(a.sim, out), select(and(ne(a.tail_nan, 0), lt(rows, B)), nan, div(total, mul(rf, rf))));
          s.if(quant, (q) => q.assign(index(a.scale, out), scale));
        });
        th.b.if(quant, (q) => {
          const scope = { ...th, b: q };
          for (let d = 0; d < xf.size; d++) {
            const y = q.let('y', float32, div(xf.at(scope, d), scale));
            q.assign(
              x8.at(scope, d),
              cast(call('truncf', [add(y, call('copysignf', [f32(0.5), y], float32, { pure: true }))], float32, { pure: true }), int8),
            );
          }
          storeTile(scope, x8Window, x8);
        });
      });
    });
  }
}
