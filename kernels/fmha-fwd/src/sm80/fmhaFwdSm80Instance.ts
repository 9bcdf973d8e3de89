// sm_80 attention-forward instances: a Policy bound to the cp.async + ldmatrix + mma.sync pipeline
// of @tilekit/fmha (FlashAttention-2's schedule), with a deterministic key (= entry point), the
// launch constants and the kernel parameters. The same runtime features as the sm_90a instance
// (batch/group mode, per-batch seqlen_k, GQA, window masks, LSE, layouts through strides), with
// global pointers and element strides in place of TMA maps. Compiled for sm_80 (A100) or, with the
// sm_90a target, for Hopper (an sm_80 cubin does not load on sm_90).
import {
  cast,
  div,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  type SourceBuilder,
  sm80,
  sub,
  type InstanceKey,
  type Target,
} from '@tilekit/codegen';
import {
  FmhaFwdSm80Pipeline,
  type FmhaFwdSm80Policy,
  emitFmhaFwdBase,
  emitFmhaFwdLseBase,
  emitFmhaFwdMask,
  emitFmhaFwdSequence,
  FMHA_MAX_SEQLEN,
  fmhaFwdTileParams,
  type FmhaFwdLaunch,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';

/** The Policy of one sm_80 attention-forward instance. */
export interface FmhaFwdSm80InstancePolicy extends FmhaFwdSm80Policy {
  readonly mask: FmhaFwdMaskKind;
}

/** Elements per 16-byte cp.async vector of a 2-byte type: Q/K/V strides must keep every row 16-byte aligned. */
export const FMHA_SM80_COPY_ELEMENTS = 8;

/** Largest row stride (elements) of Q/K/V/O: an `int` kernel parameter. */
export const FMHA_SM80_MAX_ROW_STRIDE = 2 ** 31 - 1;

function params(policy: FmhaFwdSm80InstancePolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const e = getDType(policy.dtype).bytes;
  const big = { range: [0, 2 ** 50] as const };
  const rowStride = { range: [0, FMHA_SM80_MAX_ROW_STRIDE] as const };
  return {
    q: kernelParam.pointer(element, { const: true, align: 16 }),
    k: kernelParam.pointer(element, { const: true, align: 16 }),
    v: kernelParam.pointer(element, { const: true, align: 16 }),
    q_stride_row: kernelParam.i32(rowStride),
    q_stride_head: kernelParam.i64(big),
    q_stride_batch: kernelParam.i64(big),
    k_stride_row: kernelParam.i32(rowStride),
    k_stride_head: kernelParam.i64(big),
    k_stride_batch: kernelParam.i64(big),
    v_stride_row: kernelParam.i32(rowStride),
    v_stride_head: kernelParam.i64(big),
    v_stride_batch: kernelParam.i64(big),
    ...fmhaFwdTileParams(kernelParam.pointer(element, { align: 2 * e })),
  };
}

type FmhaSm80Params = ReturnType<typeof params>;

function fmhaFwdSm80Key(policy: FmhaFwdSm80InstancePolicy, target: Target): InstanceKey {
  const { tileM, tileN, headDim, headDimV, ...rest } = policy;
  return instanceKey(
    'fmha_fwd_sm80',
    { ...rest, hdim: headDim === headDimV ? headDim : `${headDim}x${headDimV}`, tile: [tileM, tileN], target: target.name },
    { tags: { dtype: '', hdim: 'd', mask: '', tile: '', qResidence: 'q', target: '' } },
  );
}

/**
 * One sm_80 attention-forward kernel (cp.async double buffering, ldmatrix + mma.sync, online softmax
 * in registers). Dynamic shared memory per block: the pipeline's (incl. 1024 of alignment slack).
 */
export class FmhaFwdSm80Instance extends KernelInstance<FmhaFwdSm80InstancePolicy, FmhaSm80Params> {
  readonly pipeline: FmhaFwdSm80Pipeline;
  protected readonly sourceHeader = { title: 'fmha forward (sm_80 pipeline)', generator: '@tilekit/kernel-fmha-fwd' };

  constructor(policy: FmhaFwdSm80InstancePolicy, target: Target = sm80) {
    const frozen = Object.freeze({ ...policy });
    const { mask: _mask, ...pipelinePolicy } = frozen;
    const pipeline = new FmhaFwdSm80Pipeline(pipelinePolicy);
    super({
      key: fmhaFwdSm80Key(frozen, target),
      policy: frozen,
      target,
      params: params(frozen, target),
      threads: pipeline.threads,
      sharedBytes: pipeline.sharedBytes,
    });
    this.pipeline = pipeline;
  }

  /** Grid for `batch` sequences of at most `maxSeqlenQ` query rows and `nheadQ` heads: (query tiles, heads, batch). */
  launch(batch: number, nheadQ: number, maxSeqlenQ: number): FmhaFwdLaunch {
    return {
      grid: [Math.max(1, this.pipeline.queryTiles(maxSeqlenQ)), nheadQ, batch],
      block: [this.threads, 1, 1],
      sharedBytes: this.sharedBytes,
    };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const e = getDType(P.dtype).bytes;
    const rowsQ = symbol('seqlen_q', { max: FMHA_MAX_SEQLEN });
    const rowsK = symbol('seqlen_k', { max: FMHA_MAX_SEQLEN });
    const v = FMHA_SM80_COPY_ELEMENTS;
    const input = (rows: typeof rowsQ, stride: string, cols: number) =>
      makeNaiveTensorDescriptor([rows, cols], [symbol(stride, { max: FMHA_SM80_MAX_ROW_STRIDE, multipleOf: v }), 1], { vectorLength: v });
    const qDesc = input(rowsQ, 'q_stride_row', P.headDim);
    const kDesc = input(rowsK, 'k_stride_row', P.headDim);
    const vDesc = input(rowsK, 'v_stride_row', P.headDimV);
    const oDesc = makeNaiveTensorDescriptor(
      [rowsQ, P.headDimV],
      [symbol('o_stride_row', { max: FMHA_SM80_MAX_ROW_STRIDE, multipleOf: 2 }), 1],
      { vectorLength: 2 },
    );
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch', int32, cast(t.blockIdx('z'), int32));
      const head = b.let('head', int32, cast(t.blockIdx('y'), int32));
      const headK = b.let('head_k', int32, div(head, a.nhead_ratio));
      // Masked kernels start with the query tiles that see the most keys (the last ones under a causal mask).
      const tile = b.let(
        'q_tile_index',
        int32,
        P.mask === 'none' ? cast(t.blockIdx('x'), int32) : sub(sub(cast(t.gridDim('x'), int32), 1), cast(t.blockIdx('x'), int32)),
      );
      const m0 = b.let('m0', int32, mul(tile, P.tileM));
      // Group mode: the launcher passes batch strides 0 (a sequence's rows are rows of one "batch").
      const seq = emitFmhaFwdSequence(b, a, batch, m0);
      const { rowQ, rowK, seqlenQ, seqlenK } = seq;
      const maskCode = emitFmhaFwdMask(b, P.mask, a, seq);
      const rowOffset = (row: typeof rowQ, stride: typeof a.q_stride_row) => mul(cast(row, int64), cast(stride, int64));
      const qBase = emitFmhaFwdBase(b, 'q_base', a.q, {
        batch,
        batchStride: a.q_stride_batch,
        head,
        headStride: a.q_stride_head,
        rowOffset: rowOffset(rowQ, a.q_stride_row),
      });
      const kBase = emitFmhaFwdBase(b, 'k_base', a.k, {
        batch,
        batchStride: a.k_stride_batch,
        head: headK,
        headStride: a.k_stride_head,
        rowOffset: rowOffset(rowK, a.k_stride_row),
      });
      const vBase = emitFmhaFwdBase(b, 'v_base', a.v, {
        batch,
        batchStride: a.v_stride_batch,
        head: headK,
        headStride: a.v_stride_head,
        rowOffset: rowOffset(rowK, a.v_stride_row),
      });
      const oBase = emitFmhaFwdBase(b, 'o_base', a.o, {
        batch,
        batchStride: a.o_stride_batch,
        head,
        headStride: a.o_stride_head,
        rowOffset: rowOffset(rowQ, a.o_stride_row),
      });
      const lseBase = emitFmhaFwdLseBase(b, a.lse, {
        batch,
        batchStride: a.lse_stride_batch,
        head,
        headStride: a.lse_stride_head,
        rowOffset: cast(rowQ, int64),
      });
      this.pipeline.emit(b, t, {
        q: makeTensorView(qBase, qDesc, { elementBytes: e }),
        k: makeTensorView(kBase, kDesc, { elementBytes: e }),
        v: makeTensorView(vBase, vDesc, { elementBytes: e }),
        o: makeTensorView(oBase, oDesc, { elementBytes: e }),
        seqlenQ,
        seqlenK,
        m0,
        scaleLog2: a.scale_log2,
        mask: maskCode,
        symbols: {
          seqlen_q: seqlenQ,
          seqlen_k: seqlenK,
          q_stride_row: a.q_stride_row,
          k_stride_row: a.k_stride_row,
          v_stride_row: a.v_stride_row,
          o_stride_row: a.o_stride_row,
        },
        lse: lseBase,
      });
    });
  }
}
