// The sm_90a dq_dk_dv kernel of FFPA's backward (large head dims): @tilekit/fmha's
// FmhaBwdWsSplitDPipeline (warp-specialized: a TMA producer warpgroup, two wgmma consumer
// warpgroups; a cluster of CTAs per 64 keys, each holding its columns of K and V and exchanging
// partial scores through distributed shared memory) bound to its kernel arguments, named `ffpa_bwd_sm90_…`.
//
// Grid: x = key tile · cluster CTAs + rank (a cluster of CTAs per key tile, each one column slice),
// y = key head, z = batch. A block loops over the query heads of its key head's GQA group and the query
// tiles its keys meet. Parameters as the dense sm_90 dq_dk_dv kernel's: TMA maps of Q, K, V, dO
// ([64 columns, 64 rows, 1, 1] boxes over [hdim, rows, heads, batches]; group mode one batch), then
// the arguments every dq_dk_dv shares. dQ: fp32, added with `red.global.add.f32` into the unified
// backward workspace in its `atomic` layout (zeroed first; convert_dq turns it into dQ).
import {
  add,
  cast,
  div,
  ge,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  select,
  type SourceBuilder,
  sm90a,
  type Expr,
  type InstanceKey,
  type Target,
} from '@tilekit/codegen';
import {
  emitFmhaBwdDqAccBase,
  emitFmhaBwdLseRow,
  emitFmhaBwdRowBase,
  emitFmhaBwdSequence,
  emitFmhaFwdMask,
  FMHA_BWD_SPLIT_D_ANY_DQ_ORDER,
  fmhaBwdDqDkDvParams,
  fmhaBwdPipelineInstanceOptions,
  makeFmhaBwdKernelLaunch,
  type FmhaBwdWsSplitDPipeline,
  type FmhaBwdWsSplitDDqOrder,
  type FmhaBwdWsSplitDPolicy,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import { FFPA_BWD_MAX_SEQLEN, type FfpaBwdLaunch } from './ffpaBwdInstance.ts';

/** The Policy of one sm_90a FFPA backward dq_dk_dv instance: the pipeline's and the mask kind. */
export type FfpaBwdSm90Policy = FmhaBwdWsSplitDPolicy & { readonly mask: FmhaFwdMaskKind };

function params(policy: FfpaBwdSm90Policy, target: Target) {
  return {
    q_map: kernelParam.tensorMap(),
    k_map: kernelParam.tensorMap(),
    v_map: kernelParam.tensorMap(),
    do_map: kernelParam.tensorMap(),
    ...fmhaBwdDqDkDvParams(target.dtypeType(policy.dtype), { maxSeqlen: FFPA_BWD_MAX_SEQLEN, outputRowStride: [1, 2 ** 31 - 1] }),
    // Key-ordered dQ: the workspace's query tile counters ([batch][nhead_q][dq_counter_tiles] int32).
    ...(dqAccumulationOf(policy) === 'ordered'
      ? { dq_counter: kernelParam.pointer(int32, { align: 4 }), dq_counter_tiles: kernelParam.i32({ range: [0, 2 ** 31 - 1] }) }
      : {}),
  };
}

/** The workspace layout the instance's dQ order adds into: `atomic` (as it comes) or `ordered` (key order, deterministic). */
function dqAccumulationOf(policy: FmhaBwdWsSplitDPolicy): FmhaBwdWsSplitDDqOrder['dqAccumulation'] {
  return (policy.dqOrder ?? FMHA_BWD_SPLIT_D_ANY_DQ_ORDER).dqAccumulation;
}

type Params = ReturnType<typeof params>;

/** Name: `ffpa_bwd_sm90_<dtype>_d<d>[x<d_v>]_<mask>_64x64_w<width>_s<stages>[_dqord]_<target>` (`dqord`: key-ordered dQ). */
function ffpaBwdSm90Key(pipeline: FmhaBwdWsSplitDPipeline, policy: FfpaBwdSm90Policy, target: Target): InstanceKey {
  const { headDim, headDimV, dqOrder, ...rest } = policy;
  const order = dqOrder?.nameTag ?? '';
  return instanceKey(
    'ffpa_bwd_sm90',
    {
      ...rest,
      hdim: headDim === headDimV ? headDim : `${headDim}x${headDimV}`,
      tile: [pipeline.tileN, pipeline.tileM],
      ...(order === '' ? {} : { order }),
      target: target.name,
    },
    { tags: { dtype: '', hdim: 'd', mask: '', tile: '', ...pipeline.keyTags, ...(order === '' ? {} : { order: '' }), target: '' } },
  );
}

/** One sm_90a FFPA backward dq_dk_dv kernel. */
export class FfpaBwdSm90Instance extends KernelInstance<FfpaBwdSm90Policy, Params> {
  readonly pipeline: FmhaBwdWsSplitDPipeline;
  protected readonly sourceHeader = {
    title: 'ffpa backward dq_dk_dv (large head dims, split-D, sm_90a warp-specialized pipeline)',
    generator: '@tilekit/kernel-ffpa',
  };

  constructor(pipeline: FmhaBwdWsSplitDPipeline, mask: FmhaFwdMaskKind, target: Target = sm90a) {
    const policy = Object.freeze({ ...pipeline.policy, mask });
    super(
      fmhaBwdPipelineInstanceOptions(pipeline, {
        key: ffpaBwdSm90Key(pipeline, policy, target),
        policy,
        target,
        params: params(policy, target),
      }),
    );
    this.pipeline = pipeline;
  }

  /** kN0: key rows per block (the workspace's facts). */
  get kN0(): number {
    return this.pipeline.tileN;
  }

  /** kM0: query rows per tile (the `ordered` workspace counts adds per query tile). */
  get kM0(): number {
    return this.pipeline.tileM;
  }

  /** The workspace layout dQ is added into: `ordered` (key order, deterministic) or `atomic` (as it comes). */
  get dqAccumulation(): FmhaBwdWsSplitDDqOrder['dqAccumulation'] {
    return dqAccumulationOf(this.policy);
  }

  /** Whether dQ is added in key order (deterministic). */
  get keyOrdered(): boolean {
    return this.dqAccumulation === 'ordered';
  }

  /** TMA boxes (dimension 0 innermost): Q/dO and K/V [64 columns, 64 rows, 1, 1]. */
  get tmaBoxes(): { readonly q: readonly number[]; readonly kv: readonly number[] } {
    return { q: [64, this.pipeline.tileM, 1, 1], kv: [64, this.pipeline.tileN, 1, 1] };
  }

  /**
   * Grid for `batch` sequences of at most `maxSeqlenK` keys (physical slots in group mode) and
   * `nheadK` key heads: x = key tiles × the pipeline's cluster CTAs, in clusters of [CTAs, 1, 1].
   */
  launch(batch: number, nheadK: number, maxSeqlenK: number): FfpaBwdLaunch {
    const ctas = this.pipeline.clusterCtas;
    return makeFmhaBwdKernelLaunch([Math.max(1, this.pipeline.keyTiles(maxSeqlenK)) * ctas, nheadK, batch], this, ctas);
  }

  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const e = getDType(P.dtype).bytes;
    const rowsK = symbol('seqlen_k', { max: FFPA_BWD_MAX_SEQLEN });
    const dkStride = symbol('dk_stride_row', { max: 2 ** 31 - 1 });
    const dvStride = symbol('dv_stride_row', { max: 2 ** 31 - 1 });
    const dkDesc = makeNaiveTensorDescriptor([rowsK, P.headDim], [dkStride, 1], { vectorLength: 2 });
    const dvDesc = makeNaiveTensorDescriptor([rowsK, P.headDimV], [dvStride, 1], { vectorLength: 2 });
    const ctas = this.pipeline.clusterCtas;
    const tileN = this.pipeline.tileN;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch_idx', int32, cast(t.blockIdx('z'), int32));
      const headK = b.let('head_k', int32, cast(t.blockIdx('y'), int32));
      const bx = b.let('block_x', int32, cast(t.blockIdx('x'), int32));
      const n0 = b.let('n0', int32, mul(div(bx, ctas), tileN));
      const seq = emitFmhaBwdSequence(b, a, batch);
      const { group, rowQ, rowK, seqlenQ, seqlenK } = seq;
      b.comment("a key tile past the batch's key slot has nothing to write");
      b.if(ge(n0, seq.slotK), (x) => x.return());
      const mapBatch = b.let('map_batch', int32, select(group, 0, batch));
      const maskCode = emitFmhaFwdMask(b, P.mask, a, seq);
      b.comment('the unified backward workspace, atomic layout: nsplits[1] (16 B), group-mode dq_acc offsets[batch + 1], then dq_acc');
      const dqAcc = emitFmhaBwdDqAccBase(b, a, { batch, group, headDim: P.headDim, dqAccName: 'dq_acc_base' });
      const dkStrides = { row: a.dk_stride_row, head: a.dk_stride_head, batch: a.dk_stride_batch };
      const dkBase = emitFmhaBwdRowBase(b, 'dk_base', a.dk, dkStrides, batch, headK, rowK);
      const dvStrides = { row: a.dv_stride_row, head: a.dv_stride_head, batch: a.dv_stride_batch };
      const dvBase = emitFmhaBwdRowBase(b, 'dv_base', a.dv, dvStrides, batch, headK, rowK);
      this.pipeline.emit(b, t, {
        qMap: a.q_map,
        kMap: a.k_map,
        vMap: a.v_map,
        doMap: a.do_map,
        lseRow: (bb, head) => emitFmhaBwdLseRow(bb, 'lse_row', a.lse, a, mapBatch, head, rowQ),
        dRow: (bb, head) => emitFmhaBwdLseRow(bb, 'd_row', a.d, a, mapBatch, head, rowQ),
        qCoords: (d0: Expr, row: Expr, head: Expr) => [d0, add(rowQ, row), head, mapBatch].map((x) => cast(x, int32)),
        kvCoords: (d0: Expr, row: Expr) => [d0, add(rowK, row), headK, mapBatch].map((x) => cast(x, int32)),
        seqlenQ,
        seqlenK,
        headRatio: a.nhead_ratio,
        firstHead: b.let('first_head', int32, mul(headK, a.nhead_ratio)),
        scale: a.scale,
        scaleLog2: a.scale_log2,
        mask: maskCode,
        n0,
        dqRow: (bb, head) => dqAcc.row(bb, cast(head, int64), seqlenQ),
        ...(a.dq_counter === undefined || a.dq_counter_tiles === undefined
          ? {}
          : {
              dqCounter: (_bb: unknown, head: Expr, i0: Expr) =>
                add(a.dq_counter!, add(mul(add(mul(batch, a.nhead_q), head), a.dq_counter_tiles!), div(i0, this.pipeline.tileM))),
            }),
        dk: makeTensorView(dkBase, dkDesc, { elementBytes: e }),
        dv: makeTensorView(dvBase, dvDesc, { elementBytes: e }),
        symbols: { seqlen_k: seqlenK, dk_stride_row: a.dk_stride_row, dv_stride_row: a.dv_stride_row },
      });
    });
  }
}
