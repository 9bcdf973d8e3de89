// The dq_dk_dv kernel of FFPA's backward (large head dims): @tilekit/fmha's
// FmhaBwdSm80SplitDPipeline (S and dP recomputed over 64-column chunks of d and d_v, mma.sync +
// cp.async + ldmatrix, shared memory independent of d) bound to its kernel arguments, named
// `ffpa_bwd_sm80_…`. Built for sm_90a it runs on Hopper.
//
// Grid: x = key tile · slices + slice (column slice innermost: the blocks of one key tile share its
// K/V rows in L2), y = key head, z = batch. A block loops over the query heads of its key head's GQA
// group (dK, dV of a shared key head accumulate in registers, as the dense backward does: no
// reduce), and over the query tiles its keys meet.
//
// dQ: fp32, atomically added (`red.global.add.f32`) into the unified backward workspace of
// @tilekit/fmha (`makeFmhaBwdWorkspace`) in its `atomic` layout — nsplits (one int32 = 1, padded to
// 16 bytes), in group mode the int64 dq_acc offsets (batch + 1, padded to 16 bytes), then dq_acc
// [batch][nheadQ][1][sq][hdimQ] (group mode: batch b at offsets[b], [nheadQ][1][sq_b][hdimQ]) —
// so the workspace must be zeroed first and a convert step turns it into dQ.
import {
  cast,
  div,
  ge,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mod,
  mul,
  select,
  type SourceBuilder,
  sm90a,
  type BlockBuilder,
  type Expr,
  type InstanceKey,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import {
  emitFmhaBwdDqAccBase,
  emitFmhaBwdLseRow,
  emitFmhaBwdRowBase,
  emitFmhaBwdSequence,
  emitFmhaFwdMask,
  fmhaBwdDqDkDvParams,
  fmhaBwdPipelineInstanceOptions,
  makeFmhaBwdKernelLaunch,
  type FmhaBwdKernelLaunch,
  type FmhaBwdRowStrides,
  type FmhaBwdSm80SplitDPipeline,
  type FmhaBwdSm80SplitDPolicy,
  type FmhaFwdMaskKind,
  fmhaRowStrideParams,
} from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';

/** Longest sequence (and group-mode total): 2^24 rows. */
export const FFPA_BWD_MAX_SEQLEN = 2 ** 24;

/** Largest row stride (elements) of Q/K/V/dO/dK/dV: an `int` kernel parameter. */
export const FFPA_BWD_MAX_ROW_STRIDE = 2 ** 31 - 1;

/** The Policy of one FFPA backward dq_dk_dv instance: the pipeline's and the mask kind. */
export type FfpaBwdPolicy = FmhaBwdSm80SplitDPolicy & { readonly mask: FmhaFwdMaskKind };

function params(policy: FfpaBwdPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const rowStride = [0, FFPA_BWD_MAX_ROW_STRIDE] as const;
  const input = () => kernelParam.pointer(element, { const: true, align: 16 });
  return {
    q: input(),
    k: input(),
    v: input(),
    do_: input(),
    ...fmhaRowStrideParams('q', rowStride),
    ...fmhaRowStrideParams('k', rowStride),
    ...fmhaRowStrideParams('v', rowStride),
    ...fmhaRowStrideParams('do', rowStride),
    ...fmhaBwdDqDkDvParams(element, { maxSeqlen: FFPA_BWD_MAX_SEQLEN, outputRowStride: rowStride }),
  };
}

type Params = ReturnType<typeof params>;

/** The launch: grid (key tiles · slices, key heads, batch), threads, dynamic shared memory. */
export type FfpaBwdLaunch = FmhaBwdKernelLaunch;

/** Name: `ffpa_bwd_sm80_<dtype>_d<d>[x<d_v>]_<mask>_64x64_w<width>_s<stages>_<target>`. */
function ffpaBwdKey(policy: FfpaBwdPolicy, target: Target): InstanceKey {
  const { tileM, tileN, headDim, headDimV, ...rest } = policy;
  return instanceKey(
    'ffpa_bwd_sm80',
    { ...rest, hdim: headDim === headDimV ? headDim : `${headDim}x${headDimV}`, tile: [tileN, tileM], target: target.name },
    { tags: { dtype: '', hdim: 'd', mask: '', tile: '', sliceWidth: 'w', stages: 's', target: '' } },
  );
}

/** One FFPA backward dq_dk_dv kernel. */
export class FfpaBwdInstance extends KernelInstance<FfpaBwdPolicy, Params> {
  readonly pipeline: FmhaBwdSm80SplitDPipeline;
  protected readonly sourceHeader = {
    title: 'ffpa backward dq_dk_dv (large head dims, split-D, sm_80 pipeline)',
    generator: '@tilekit/kernel-ffpa',
  };

  constructor(pipeline: FmhaBwdSm80SplitDPipeline, mask: FmhaFwdMaskKind, target: Target = sm90a) {
    const policy = Object.freeze({ ...pipeline.policy, mask });
    super(fmhaBwdPipelineInstanceOptions(pipeline, { key: ffpaBwdKey(policy, target), policy, target, params: params(policy, target) }));
    this.pipeline = pipeline;
  }

  /** kN0: key rows per block (the workspace's facts). */
  get kN0(): number {
    return this.policy.tileN;
  }

  /** Grid for `batch` sequences of at most `maxSeqlenK` keys (physical slots in group mode) and `nheadK` key heads. */
  launch(batch: number, nheadK: number, maxSeqlenK: number): FfpaBwdLaunch {
    const x = Math.max(1, this.pipeline.keyTiles(maxSeqlenK)) * this.pipeline.slices;
    return makeFmhaBwdKernelLaunch([x, nheadK, batch], this);
  }

  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const e = getDType(P.dtype).bytes;
    const rowsQ = symbol('seqlen_q', { max: FFPA_BWD_MAX_SEQLEN });
    const rowsK = symbol('seqlen_k', { max: FFPA_BWD_MAX_SEQLEN });
    const slotK = symbol('seqlen_k_slot', { max: FFPA_BWD_MAX_SEQLEN });
    const input = (rows: typeof rowsQ, stride: string, cols: number) =>
      makeNaiveTensorDescriptor([rows, cols], [symbol(stride, { max: FFPA_BWD_MAX_ROW_STRIDE, multipleOf: 8 }), 1], { vectorLength: 8 });
    const output = (stride: string, cols: number) =>
      makeNaiveTensorDescriptor([slotK, cols], [symbol(stride, { max: FFPA_BWD_MAX_ROW_STRIDE, multipleOf: 2 }), 1], { vectorLength: 2 });
    const slices = this.pipeline.slices;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch_idx', int32, cast(t.blockIdx('z'), int32));
      const headK = b.let('head_k', int32, cast(t.blockIdx('y'), int32));
      const bx = b.let('block_x', int32, cast(t.blockIdx('x'), int32));
      const slice = b.let('slice', int32, mod(bx, slices));
      const n0 = b.let('n0', int32, mul(div(bx, slices), P.tileN));
      const seq = emitFmhaBwdSequence(b, a, batch);
      const { rowQ, rowK, seqlenQ, seqlenK } = seq;
      b.comment("a key tile past the batch's key slot has nothing to write");
      b.if(ge(n0, seq.slotK), (x) => x.return());
      const mapBatch = b.let('map_batch', int64, cast(select(seq.group, 0, batch), int64));
      const maskCode = emitFmhaFwdMask(b, P.mask, a, seq);
      const base = (bb: BlockBuilder, name: string, ptr: VarExpr, strides: FmhaBwdRowStrides, head: Expr, row: Expr): Expr =>
        emitFmhaBwdRowBase(bb, name, ptr, strides, mapBatch, head, row);
      const strides = (p: 'q' | 'k' | 'v' | 'do' | 'dk' | 'dv'): FmhaBwdRowStrides => ({
        row: a[`${p}_stride_row`],
        head: a[`${p}_stride_head`],
        batch: a[`${p}_stride_batch`],
      });
      b.comment('the unified backward workspace, atomic layout: nsplits[1] (16 B), group-mode dq_acc offsets[batch + 1], then dq_acc');
      const dqAcc = emitFmhaBwdDqAccBase(b, a, { batch, group: seq.group, headDim: P.headDim, dqAccName: 'dq_acc_base' });
      const q = (bb: BlockBuilder, head: Expr) =>
        makeTensorView(base(bb, 'q_base', a.q, strides('q'), head, rowQ), input(rowsQ, 'q_stride_row', P.headDim), { elementBytes: e });
      const dO = (bb: BlockBuilder, head: Expr) =>
        makeTensorView(base(bb, 'do_base', a.do_, strides('do'), head, rowQ), input(rowsQ, 'do_stride_row', P.headDimV), {
          elementBytes: e,
        });
      this.pipeline.emit(b, t, {
        k: makeTensorView(base(b, 'k_base', a.k, strides('k'), headK, rowK), input(rowsK, 'k_stride_row', P.headDim), { elementBytes: e }),
        v: makeTensorView(base(b, 'v_base', a.v, strides('v'), headK, rowK), input(rowsK, 'v_stride_row', P.headDimV), { elementBytes: e }),
        q,
        dO,
        lseRow: (bb, head) => emitFmhaBwdLseRow(bb, 'lse_row', a.lse, a, mapBatch, head, rowQ),
        dRow: (bb, head) => emitFmhaBwdLseRow(bb, 'd_row', a.d, a, mapBatch, head, rowQ),
        dqRow: (bb, head) => dqAcc.row(bb, cast(head, int64), seqlenQ),
        dk: makeTensorView(base(b, 'dk_base', a.dk, strides('dk'), headK, rowK), output('dk_stride_row', P.headDim), { elementBytes: e }),
        dv: makeTensorView(base(b, 'dv_base', a.dv, strides('dv'), headK, rowK), output('dv_stride_row', P.headDimV), { elementBytes: e }),
        seqlenQ,
        seqlenK,
        n0,
        slice,
        firstHead: b.let('first_head', int32, mul(headK, a.nhead_ratio)),
        headCount: a.nhead_ratio,
        scale: a.scale,
        scaleLog2: a.scale_log2,
        mask: maskCode,
        symbols: {
          seqlen_q: seqlenQ,
          seqlen_k: seqlenK,
          seqlen_k_slot: seq.slotK,
          q_stride_row: a.q_stride_row,
          k_stride_row: a.k_stride_row,
          v_stride_row: a.v_stride_row,
          do_stride_row: a.do_stride_row,
          dk_stride_row: a.dk_stride_row,
          dv_stride_row: a.dv_stride_row,
        },
      });
    });
  }
}
