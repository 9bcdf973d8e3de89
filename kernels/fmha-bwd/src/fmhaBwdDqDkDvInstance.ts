// The dq_dk_dv kernel of attention backward: a Policy bound to @tilekit/fmha's sm_90a backward
// pipeline, with its key (= entry point), parameters and launch shape. dQ partials go to the
// unified workspace (see @tilekit/fmha's FmhaBwdWorkspace layout): the kernel finds nsplits, the
// group-mode offsets and dq_acc itself from the workspace pointer and the batch count.
import {
  add,
  cast,
  div,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  mul,
  select,
  type SourceBuilder,
  sm90a,
  type BlockBuilder,
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
  fmhaBwdDqDkDvParams,
  fmhaBwdPipelineInstanceOptions,
  makeFmhaBwdKernelLaunch,
  type FmhaBwdKernelLaunch,
  FmhaBwdWsPipeline,
  type FmhaBwdMaskKind,
  type FmhaBwdWsPolicy,
  scoreModifierKeyPart,
  type FmhaScoreModifier,
} from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';

/**
 * The mask kinds a dq_dk_dv instance is compiled for, of @tilekit/fmha's `FmhaBwdMaskKind`: none or
 * a window (causal is a window); a generic mask is not compiled.
 */
export type FmhaBwdDqDkDvMaskKind = Extract<FmhaBwdMaskKind, 'none' | 'window'>;

/** The Policy of one dq_dk_dv instance. */
export interface FmhaBwdDqDkDvPolicy extends FmhaBwdWsPolicy {
  readonly mask: FmhaBwdDqDkDvMaskKind;
  /** A score modifier (soft-capping, ALiBi); its parameters follow the kernel's own, its tag ends the name. */
  readonly scoreModifier?: FmhaScoreModifier;
}

/** Longest sequence (and group-mode total): 2^24 rows keeps the per-row dQ offsets (row · head dim) in int32. */
export const FMHA_BWD_MAX_SEQLEN = 2 ** 24;

/**
 * The workspace's head: nsplits (int32, `batch` entries in deterministic group mode, else 1), then in
 * group mode the int64 dq_acc offsets (batch + 1), each region 16-byte aligned; dq_acc follows.
 */
export function dqAccHeadBytes(batch: number, group: boolean, deterministic: boolean): number {
  const align = (x: number): number => Math.ceil(x / 16) * 16;
  return align(4 * (group && deterministic ? batch : 1)) + (group ? align(8 * (batch + 1)) : 0);
}

function params(policy: FmhaBwdDqDkDvPolicy, target: Target) {
  return {
    q_map: kernelParam.tensorMap(),
    k_map: kernelParam.tensorMap(),
    v_map: kernelParam.tensorMap(),
    do_map: kernelParam.tensorMap(),
    ...fmhaBwdDqDkDvParams(target.dtypeType(policy.dtype), { maxSeqlen: FMHA_BWD_MAX_SEQLEN, outputRowStride: [1, 2 ** 31 - 1] }),
    ...policy.scoreModifier?.params(),
  };
}

type Params = ReturnType<typeof params>;

/** The launch: grid (key tiles or splits, key heads, batch), threads, dynamic shared memory. */
export type FmhaBwdLaunch = FmhaBwdKernelLaunch;

function dqDkDvKey(policy: FmhaBwdDqDkDvPolicy, target: Target): InstanceKey {
  const { tileM, tileN, headDim, headDimV, scoreModifier, ...rest } = policy;
  const hdim = headDim === headDimV ? headDim : `${headDim}x${headDimV}`;
  const score = scoreModifierKeyPart(scoreModifier);
  return instanceKey(
    'fmha_bwd_dq_dk_dv_sm90',
    { ...rest, hdim, tile: [tileN, tileM], target: target.name, ...score.config },
    { tags: { dtype: '', hdim: 'd', mask: '', tile: '', stages: 's', dqMode: 'dq', ...score.tags } },
  );
}

/** One dq_dk_dv kernel. */
export class FmhaBwdDqDkDvInstance extends KernelInstance<FmhaBwdDqDkDvPolicy, Params> {
  readonly pipeline: FmhaBwdWsPipeline;
  protected readonly sourceHeader = { title: 'fmha backward', generator: '@tilekit/kernel-fmha-bwd' };

  constructor(policy: FmhaBwdDqDkDvPolicy, target: Target = sm90a) {
    const frozen = Object.freeze({ ...policy });
    const pipeline = new FmhaBwdWsPipeline(policy);
    super(
      fmhaBwdPipelineInstanceOptions(pipeline, { key: dqDkDvKey(frozen, target), policy: frozen, target, params: params(frozen, target) }),
    );
    this.pipeline = pipeline;
  }

  /** kN0: key rows per block — what the workspace's deterministic split count is made of. */
  get kN0(): number {
    return this.policy.tileN;
  }

  /** TMA boxes (dimension 0 innermost): Q/dO [64, tileM, 1, 1], K/V [64, 64, 1, 1] (64-row chunks). */
  get tmaBoxes(): { readonly q: readonly number[]; readonly kv: readonly number[] } {
    return { q: [64, this.policy.tileM, 1, 1], kv: [64, 64, 1, 1] };
  }

  /** Grid for `gridX` blocks along the keys (key tiles, or splits), key heads and batch. */
  launch(gridX: number, nheadK: number, batch: number): FmhaBwdLaunch {
    return makeFmhaBwdKernelLaunch([Math.max(1, gridX), nheadK, batch], this);
  }

  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const rowsK = symbol('seqlen_k', { max: FMHA_BWD_MAX_SEQLEN });
    const dkStride = symbol('dk_stride_row', { max: 2 ** 31 - 1 });
    const dvStride = symbol('dv_stride_row', { max: 2 ** 31 - 1 });
    const dkDesc = makeNaiveTensorDescriptor([rowsK, P.headDim], [dkStride, 1], { vectorLength: 2 });
    const dvDesc = makeNaiveTensorDescriptor([rowsK, P.headDimV], [dvStride, 1], { vectorLength: 2 });
    const split = P.dqMode === 'split';
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, a) => {
      const batch = b.let('batch_idx', int32, cast(t.blockIdx('z'), int32));
      const headK = b.let('head_k', int32, cast(t.blockIdx('y'), int32));
      const seq = emitFmhaBwdSequence(b, a, batch);
      const { group, rowQ, rowK, seqlenQ, seqlenK, slotK } = seq;
      const mapBatch = b.let('map_batch', int32, select(group, 0, batch));
      const maskCode = emitFmhaFwdMask(b, P.mask, a, seq);
      b.comment('the unified workspace: nsplits[], group-mode dq_acc offsets[], then dq_acc');
      const dq = emitFmhaBwdDqAccBase(b, a, { batch, group, headDim: P.headDim, nsplits: { split } });
      const { nsplits } = dq;
      // Split mode walks the physical key slot (the workspace's nsplits count it): tiles past a
      // shorter logical seqlen_k still store their (zero) dQ partial, so no split is left unwritten.
      const kvTiles = b.let('kv_tiles', int32, div(add(split ? slotK : seqlenK, P.tileN - 1), P.tileN));
      const block = b.let('kv_block', int32, cast(t.blockIdx('x'), int32));
      const keyTiles = split
        ? { first: block, step: nsplits, count: kvTiles }
        : { first: block, step: cast(t.gridDim('x'), int32), count: kvTiles };
      const dkStrides = { row: a.dk_stride_row, head: a.dk_stride_head, batch: a.dk_stride_batch };
      const dkBase = emitFmhaBwdRowBase(b, 'dk_base', a.dk, dkStrides, batch, headK, rowK);
      const dvStrides = { row: a.dv_stride_row, head: a.dv_stride_head, batch: a.dv_stride_batch };
      const dvBase = emitFmhaBwdRowBase(b, 'dv_base', a.dv, dvStrides, batch, headK, rowK);
      const e = getDType(P.dtype).bytes;
      this.pipeline.emit(b, t, {
        qMap: a.q_map,
        kMap: a.k_map,
        vMap: a.v_map,
        doMap: a.do_map,
        lseRow: (bb: BlockBuilder, head: Expr) => emitFmhaBwdLseRow(bb, 'lse_row', a.lse, a, select(group, 0, batch), head, rowQ),
        dRow: (bb: BlockBuilder, head: Expr) => emitFmhaBwdLseRow(bb, 'd_row', a.d, a, select(group, 0, batch), head, rowQ),
        qCoords: (d0, row, head) => [d0, add(rowQ, row), head, mapBatch].map((x) => cast(x, int32)),
        kvCoords: (d0, row) => [d0, add(rowK, row), headK, mapBatch].map((x) => cast(x, int32)),
        seqlenQ,
        seqlenK,
        headRatio: a.nhead_ratio,
        firstHead: b.let('first_head', int32, mul(headK, a.nhead_ratio)),
        scale: a.scale,
        scaleLog2: a.scale_log2,
        mask: maskCode,
        keyTiles,
        dqAcc: (bb: BlockBuilder, head: Expr) =>
          dq.row(bb, add(mul(cast(head, int64), nsplits), split ? cast(block, int64) : cast(0, int64)), seqlenQ),
        dk: makeTensorView(dkBase, dkDesc, { elementBytes: e }),
        dv: makeTensorView(dvBase, dvDesc, { elementBytes: e }),
        symbols: { seqlen_k: seqlenK, dk_stride_row: a.dk_stride_row, dv_stride_row: a.dv_stride_row },
        ...(P.scoreModifier ? { scoreModifier: P.scoreModifier.bind(a, { seqlenQ, seqlenK }) } : {}),
      });
    });
  }
}
