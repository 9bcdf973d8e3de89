// The dot_do_o kernel of attention backward (CK-tile's FmhaBwdOGradDotOKernel): D = rowsum(dO ∘ O)
// per (batch, query head, row), in fp32, into the D buffer (the LSE layout). One block reduces a
// tile of rows of one (batch, head): O and dO are loaded through tile windows (16-byte vectors,
// consecutive lanes along a row), multiplied in fp32, and summed along the head dim with a block
// tile reduction (in-thread, then a lane butterfly).
import {
  add,
  and,
  bitAnd,
  cast,
  eq,
  float32,
  index,
  int32,
  int64,
  kernelParam,
  lt,
  mul,
  select,
  sm90a,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { emitRowTileSequence } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import {
  BlockEmitter,
  blockTileReduce,
  castTile,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  reduceSum,
  sweepTile,
} from '@tilekit/tile';
import { FMHA_BWD_ROW_MAX_ROWS, FmhaBwdRowKernel, fmhaBwdRowSequenceParams, type FmhaBwdRowKernelPolicy } from './fmhaBwdRowKernel.ts';

/** O/dO elements per 16-byte vector (fp16/bf16). */
const VECTOR = 8;
/** O and dO elements each thread holds (sizes the rows per block). */
const ELEMENTS_PER_THREAD = 32;

/** The Policy of one dot_do_o instance. */
export interface FmhaBwdDotDoOPolicy extends FmhaBwdRowKernelPolicy {
  readonly headDimV: number;
}

function dotParams(policy: FmhaBwdDotDoOPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const big = { range: [0, 2 ** 50] as const };
  const rowStride = { range: [VECTOR, 2 ** 31 - VECTOR] as const };
  return {
    o: kernelParam.pointer(element, { const: true, align: 16 }),
    d_o: kernelParam.pointer(element, { const: true, align: 16 }),
    d: kernelParam.pointer(float32, { align: 4 }),
    o_stride_row: kernelParam.i32(rowStride),
    o_stride_head: kernelParam.i64(big),
    o_stride_batch: kernelParam.i64(big),
    do_stride_row: kernelParam.i32(rowStride),
    do_stride_head: kernelParam.i64(big),
    do_stride_batch: kernelParam.i64(big),
    d_stride_head: kernelParam.i64(big),
    d_stride_batch: kernelParam.i64(big),
    ...fmhaBwdRowSequenceParams(),
  };
}

type DotParams = ReturnType<typeof dotParams>;

/**
 * One dot_do_o kernel: for each (batch, query head, row) of its tile, D = Σ_j dO_j·O_j in fp32
 * (products of the fp16/bf16 values, summed in a fixed order), written at
 * d[b·d_stride_batch + h·d_stride_head + row] (group mode: row global, batch stride unused).
 * Batch mode reads `seqlen_q` rows per sequence; group mode (non-null `seqstart_q`) the rows
 * [seqstart_q[b], seqstart_q[b + 1]). O/dO strides are element strides, multiples of 8 (16-byte
 * vectors); the runner checks that. Postcondition (GPU spec, through the runner): dQ/dK/dV match
 * the CPU reference, which needs D exact to fp32 rounding.
 */
export class FmhaBwdDotDoOInstance extends FmhaBwdRowKernel<FmhaBwdDotDoOPolicy, DotParams> {
  constructor(policy: FmhaBwdDotDoOPolicy, target: Target = sm90a) {
    super(policy, target, {
      family: 'fmha_bwd_dot_do_o_sm90',
      label: 'dot_do_o',
      headDim: { key: 'hdimv', tag: 'dv', value: policy.headDimV },
      vectorLength: VECTOR,
      elementsPerThread: ELEMENTS_PER_THREAD,
      params: dotParams,
    });
  }

  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const M = this.tile.rows;
    const enc = this.tile.encoding;
    const rows = symbol('seqlen_q', { max: FMHA_BWD_ROW_MAX_ROWS });
    const oStride = symbol('o_stride_row', { max: 2 ** 31 - 1 });
    const doStride = symbol('do_stride_row', { max: 2 ** 31 - 1 });
    const e = getDType(P.dtype).bytes;
    const oDesc = makeNaiveTensorDescriptor([rows, P.headDimV], [oStride, 1], { vectorLength: VECTOR });
    const doDesc = makeNaiveTensorDescriptor([rows, P.headDimV], [doStride, 1], { vectorLength: VECTOR });
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 4 } }, (b, a) => {
      const {
        batch,
        head,
        m0,
        group,
        rowStart: rowQ,
        seqlen: seqlenQ,
      } = emitRowTileSequence(b, t, { tileRows: M, seqlen: a.seqlen_q, seqstart: a.seqstart_q });
      const mapBatch = b.let('b_off', int64, cast(select(group, 0, batch), int64));
      const row64 = cast(rowQ, int64);
      const base = (ptr: typeof a.o, sb: typeof a.o_stride_batch, sh: typeof a.o_stride_head, sr: typeof a.o_stride_row, name: string) =>
        b.let(name, ptr.type, add(ptr, add(add(mul(mapBatch, sb), mul(cast(head, int64), sh)), mul(row64, cast(sr, int64)))));
      const oBase = base(a.o, a.o_stride_batch, a.o_stride_head, a.o_stride_row, 'o_base');
      const doBase = base(a.d_o, a.do_stride_batch, a.do_stride_head, a.do_stride_row, 'do_base');
      const dBase = b.let(
        'd_base',
        a.d.type,
        add(a.d, add(add(mul(mapBatch, a.d_stride_batch), mul(cast(head, int64), a.d_stride_head)), row64)),
      );
      const block = new BlockEmitter(b, t, {
        numThreads: this.threads,
        index: { symbols: { seqlen_q: seqlenQ, o_stride_row: a.o_stride_row, do_stride_row: a.do_stride_row } },
      });
      const element = t.dtypeType(P.dtype);
      const oTile = makeDistributedTensor(block, 'o_tile', enc, element);
      const doTile = makeDistributedTensor(block, 'do_tile', enc, element);
      const prod = makeDistributedTensor(block, 'o_f32', enc, float32);
      const doF = makeDistributedTensor(block, 'do_f32', enc, float32);
      const window = (ptr: typeof oBase, desc: typeof oDesc) =>
        makeTileWindow(block, {
          view: makeTensorView(ptr, desc, { elementBytes: e }),
          lengths: [M, P.headDimV],
          origin: [m0, 0],
          encoding: enc,
          originAlignment: [M, P.headDimV],
        });
      const oWindow = window(oBase, oDesc);
      const doWindow = window(doBase, doDesc);
      b.comment('O and dO of this tile (rows past the sequence read as 0), their product in fp32');
      block.threads((th) => {
        loadTile(th, oWindow, oTile);
        loadTile(th, doWindow, doTile);
        castTile(th, prod, oTile);
        castTile(th, doF, doTile);
        sweepTile(th, prod, (x) => x.b.assign(x.value, mul(x.value, doF.at(th, x.d))));
      });
      b.comment("D = the row sums (every lane of a row ends with the sum); the row's first lane stores it");
      const rowSum = blockTileReduce(block, 'd_sum', prod, [1], reduceSum);
      const lanes = this.tile.lanesPerRow;
      block.threads((th) => {
        sweepTile(th, rowSum, (x) => {
          const row = x.b.let('row', int32, add(m0, x.x[0]!));
          x.b.if(and(lt(row, seqlenQ), eq(bitAnd(th.tid, lanes - 1), 0)), (st) => st.assign(index(dBase, row), x.value));
        });
      });
    });
  }
}
