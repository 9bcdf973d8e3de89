// The first pass of Sparge's K smoothing (km = mean over the sequence of K per (batch, K head)):
// the sequence is cut into chunks of `chunk_rows` rows, one block per (chunk, K head, batch) sums
// its chunk's rows column by column in fp32 and writes the partial sums — no atomics, so the
// second pass (`SpargeKeyMeanFinalizeInstance`) can add them in a fixed order.
import {
  add,
  cast,
  div,
  float32,
  ge,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  minOf,
  mul,
  select,
  sm90a,
  type SourceBuilder,
  sub,
  type Target,
} from '@tilekit/codegen';
import { emitRowTileSequence } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import {
  BlockEmitter,
  clearTile,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  moveTileWindow,
  reduceSum,
  sweepTile,
} from '@tilekit/tile';
import {
  checkSpargeRowPolicy,
  SPARGE_POOL_MAX_ROWS,
  SPARGE_POOL_THREADS,
  SPARGE_POOL_VECTOR,
  spargeSharedBytes,
  type SpargePoolDType,
  type SpargeRowKernelLaunch,
} from './spargePoolPolicy.ts';
import { emitWarpColumnRows, makeSpargeColumnTile, spargeColumnEncoding, spargeColumnIndexOf, sumWarpRows } from './spargePoolReduce.ts';
import { spargePoolTile, type SpargePoolTile } from './spargePoolTile.ts';

/** Rows each loop step of the K-mean pass loads (chunk lengths are multiples of it). */
export const SPARGE_KEY_MEAN_STEP_ROWS = 64;

/** The Policy of one K-mean partial-sum instance. */
export interface SpargeKeyMeanPolicy {
  readonly dtype: SpargePoolDType;
  readonly headDim: number;
}

function partialParams(policy: SpargeKeyMeanPolicy, target: Target) {
  const big = { range: [0, 2 ** 50] as const };
  return {
    k: kernelParam.pointer(target.dtypeType(policy.dtype), { const: true, align: 16 }),
    k_stride_row: kernelParam.i32({ range: [SPARGE_POOL_VECTOR, SPARGE_POOL_MAX_ROWS] }),
    k_stride_head: kernelParam.i64(big),
    k_stride_batch: kernelParam.i64(big),
    /** fp32 [batch][heads][chunks_max][headDim]. */
    partial: kernelParam.pointer(float32, { align: 4 }),
    heads: kernelParam.i32({ range: [1, 65535] }),
    chunks_max: kernelParam.i32({ range: [1, 65535] }),
    chunk_rows: kernelParam.i32({ range: [SPARGE_KEY_MEAN_STEP_ROWS, SPARGE_POOL_MAX_ROWS] }),
    seqlen: kernelParam.i32({ range: [0, SPARGE_POOL_MAX_ROWS] }),
    seqstart: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
  };
}

type PartialParams = ReturnType<typeof partialParams>;

/**
 * One K-mean partial-sum kernel. Block (c, head, b) sums, column by column in fp32, the rows
 * [c·chunk_rows, min((c + 1)·chunk_rows, seqlen_b)) of K head `head` of sequence b (batch mode:
 * `seqlen` rows at k + b·k_stride_batch; group mode: rows [seqstart[b], seqstart[b + 1])) into
 * partial[((b·heads + head)·chunks_max + c)·d + col]; a chunk past the sequence's end writes nothing.
 * The summation order is fixed (rows in load order per thread, the warp butterfly, warps in order).
 * Postcondition (GPU spec, with the finalize pass): km equals `spargeKeyMean` within fp32 rounding.
 */
export class SpargeKeyMeanPartialInstance extends KernelInstance<SpargeKeyMeanPolicy, PartialParams> {
  readonly tile: SpargePoolTile;
  protected readonly sourceHeader = { title: 'sparge K mean (partial sums)', generator: '@tilekit/kernel-sparge' };

  constructor(policy: SpargeKeyMeanPolicy, target: Target = sm90a) {
    checkSpargeRowPolicy(policy);
    const threads = SPARGE_POOL_THREADS;
    const tile = spargePoolTile({ rows: SPARGE_KEY_MEAN_STEP_ROWS, cols: policy.headDim, vectorLength: SPARGE_POOL_VECTOR, threads });
    const key = instanceKey(
      'sparge_key_mean_partial',
      { dtype: policy.dtype, hdim: policy.headDim, threads, target: target.name },
      { tags: { dtype: '', hdim: 'd', threads: 't' } },
    );
    const frozen = Object.freeze({ ...policy });
    const staticSharedBytes = spargeSharedBytes([tile.warps * policy.headDim]);
    super({ key, policy: frozen, target, params: partialParams(frozen, target), threads, staticSharedBytes });
    this.tile = tile;
  }

  /** Grid: (chunks, heads, batch). */
  launch(batch: number, heads: number, chunksMax: number): SpargeRowKernelLaunch {
    return { grid: [Math.max(1, chunksMax), heads, batch], block: [this.threads, 1, 1], sharedBytes: 0 };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const tile = this.tile;
    const D = P.headDim;
    const rowsSym = symbol('chunk_left', { max: SPARGE_POOL_MAX_ROWS });
    const strideSym = symbol('k_stride_row', { max: SPARGE_POOL_MAX_ROWS });
    const desc = makeNaiveTensorDescriptor([rowsSym, D], [strideSym, 1], { vectorLength: SPARGE_POOL_VECTOR });
    const columns = spargeColumnEncoding(tile);
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 4 } }, (b, a) => {
      const chunk = b.let('chunk', int32, cast(t.blockIdx('x'), int32));
      const {
        head,
        batch,
        group,
        rowStart,
        seqlen,
        m0: c0,
      } = emitRowTileSequence(b, t, { tileRows: a.chunk_rows, seqlen: a.seqlen, seqstart: a.seqstart });
      const left = b.let('chunk_left', int32, minOf(a.chunk_rows, sub(seqlen, c0)));
      const mapBatch = b.let('b_off', int64, cast(select(group, 0, batch), int64));
      const kBase = b.let(
        'k_base',
        a.k.type,
        add(
          a.k,
          add(
            add(mul(mapBatch, a.k_stride_batch), mul(cast(head, int64), a.k_stride_head)),
            mul(cast(add(rowStart, c0), int64), cast(a.k_stride_row, int64)),
          ),
        ),
      );
      const block = new BlockEmitter(b, t, {
        numThreads: this.threads,
        index: { symbols: { chunk_left: left, k_stride_row: a.k_stride_row } },
      });
      const raw = makeDistributedTensor(block, 'k_raw', tile.encoding, t.dtypeType(P.dtype));
      const sum = makeSpargeColumnTile(block, 'sum_k', tile, float32);
      block.threads((th) => clearTile(th, sum));
      const window = makeTileWindow(block, {
        view: makeTensorView(kBase, desc, { elementBytes: getDType(P.dtype).bytes }),
        lengths: [SPARGE_KEY_MEAN_STEP_ROWS, D],
        origin: [0, 0],
        encoding: tile.encoding,
        originAlignment: [SPARGE_KEY_MEAN_STEP_ROWS, D],
      });
      b.comment("the chunk's rows in steps (rows past the chunk read as 0 and add nothing)");
      const steps = b.let('steps', int32, div(add(left, SPARGE_KEY_MEAN_STEP_ROWS - 1), SPARGE_KEY_MEAN_STEP_ROWS));
      block.forRange({ name: 's', to: steps }, (inner) => {
        inner.threads((th) => {
          loadTile(th, window, raw);
          sweepTile(th, raw, (e) => {
            const c = sum.at(th, spargeColumnIndexOf(tile, columns, e.d));
            e.b.assign(c, add(c, cast(e.value, float32)));
          });
        });
        moveTileWindow(inner, window, [SPARGE_KEY_MEAN_STEP_ROWS, 0]);
      });
      const smem = block.shared('key_mean_rows', float32, tile.warps * D);
      block.threads((th) => emitWarpColumnRows(th, tile, [sum], [smem], reduceSum));
      block.sync();
      block.threads((th) => {
        th.b.if(ge(D - 1, th.tid), (s) => {
          const total = sumWarpRows({ ...th, b: s }, smem, tile.warps, D, th.tid, reduceSum);
          const at = add(
            mul(add(mul(add(mul(cast(batch, int64), a.heads), cast(head, int64)), cast(a.chunks_max, int64)), cast(chunk, int64)), D),
            cast(th.tid, int64),
          );
          s.assign(index(a.partial, at), total);
        });
      });
    });
  }
}
