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
  add,
  bitAnd,
  bool,
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
  mod,
  mul,
  ne,
  pointer,
  select,
  type SourceBuilder,
  sm90a,
  sub,
  uint8,
  type BlockBuilder,
  type Expr,
  type InstanceKey,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import {
  emitGenericAttentionMask,
  type FmhaBwdSm80SplitDPipeline,
  GenericAttentionMaskCode,
  type FmhaBwdSm80SplitDPolicy,
  type FmhaFwdMaskKind,
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
  const count = { range: [0, FFPA_BWD_MAX_SEQLEN] as const };
  const big = { range: [0, 2 ** 50] as const };
  const rowStride = { range: [0, FFPA_BWD_MAX_ROW_STRIDE] as const };
  const input = () => kernelParam.pointer(element, { const: true, align: 16 });
  return {
    q: input(),
    k: input(),
    v: input(),
    do_: input(),
    q_stride_row: kernelParam.i32(rowStride),
    q_stride_head: kernelParam.i64(big),
    q_stride_batch: kernelParam.i64(big),
    k_stride_row: kernelParam.i32(rowStride),
    k_stride_head: kernelParam.i64(big),
    k_stride_batch: kernelParam.i64(big),
    v_stride_row: kernelParam.i32(rowStride),
    v_stride_head: kernelParam.i64(big),
    v_stride_batch: kernelParam.i64(big),
    do_stride_row: kernelParam.i32(rowStride),
    do_stride_head: kernelParam.i64(big),
    do_stride_batch: kernelParam.i64(big),
    lse: kernelParam.pointer(float32, { const: true, align: 4 }),
    d: kernelParam.pointer(float32, { const: true, align: 4 }),
    lse_stride_head: kernelParam.i64(big),
    lse_stride_batch: kernelParam.i64(big),
    dk: kernelParam.pointer(element, { align: 4 }),
    dv: kernelParam.pointer(element, { align: 4 }),
    dk_stride_row: kernelParam.i32(rowStride),
    dk_stride_head: kernelParam.i64(big),
    dk_stride_batch: kernelParam.i64(big),
    dv_stride_row: kernelParam.i32(rowStride),
    dv_stride_head: kernelParam.i64(big),
    dv_stride_batch: kernelParam.i64(big),
    workspace: kernelParam.pointer(uint8, { align: 16 }),
    batch: kernelParam.i32({ range: [1, 65535] }),
    nhead_q: kernelParam.i32({ range: [1, 65535] }),
    nhead_ratio: kernelParam.i32({ range: [1, 65535] }),
    seqlen_q: kernelParam.i32(count),
    seqlen_k: kernelParam.i32(count),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqstart_k: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqlen_k_ptr: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    scale: kernelParam.f32(),
    scale_log2: kernelParam.f32(),
    mask_left: kernelParam.i32({ range: [-1, FFPA_BWD_MAX_SEQLEN] }),
    mask_right: kernelParam.i32({ range: [-1, FFPA_BWD_MAX_SEQLEN] }),
    mask_top_left: kernelParam.i32({ range: [0, 1] }),
  };
}

type Params = ReturnType<typeof params>;

/** The launch: grid (key tiles · slices, key heads, batch), threads, dynamic shared memory. */
export interface FfpaBwdLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

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
    super({
      key: ffpaBwdKey(policy, target),
      policy,
      target,
      params: params(policy, target),
      threads: pipeline.threads,
      sharedBytes: pipeline.sharedBytes,
    });
    this.pipeline = pipeline;
  }

  /** kN0: key rows per block (the workspace's facts). */
  get kN0(): number {
    return this.policy.tileN;
  }

  /** Grid for `batch` sequences of at most `maxSeqlenK` keys (physical slots in group mode) and `nheadK` key heads. */
  launch(batch: number, nheadK: number, maxSeqlenK: number): FfpaBwdLaunch {
    const x = Math.max(1, this.pipeline.keyTiles(maxSeqlenK)) * this.pipeline.slices;
    return { grid: [x, nheadK, batch], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes };
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
      const group = b.let('group_mode', bool, ne(select(a.seqstart_q, 1, 0), 0));
      const rowQ = b.declare('row_q', int32, 0, { storage: 'mutable' });
      const rowK = b.declare('row_k', int32, 0, { storage: 'mutable' });
      const seqlenQ = b.declare('sq', int32, a.seqlen_q, { storage: 'mutable' });
      const seqlenK = b.declare('sk', int32, a.seqlen_k, { storage: 'mutable' });
      const slotLen = b.declare('sk_slot', int32, a.seqlen_k, { storage: 'mutable' });
      b.if(group, (g) => {
        g.assign(rowQ, index(a.seqstart_q, batch));
        g.assign(rowK, index(a.seqstart_k, batch));
        g.assign(seqlenQ, sub(index(a.seqstart_q, add(batch, 1)), rowQ));
        g.assign(slotLen, sub(index(a.seqstart_k, add(batch, 1)), rowK));
        g.assign(seqlenK, slotLen);
        g.if(a.seqlen_k_ptr, (x) => x.assign(seqlenK, index(a.seqlen_k_ptr, batch)));
      });
      b.comment("a key tile past the batch's key slot has nothing to write");
      b.if(ge(n0, slotLen), (x) => x.return());
      const mapBatch = b.let('map_batch', int64, cast(select(group, 0, batch), int64));
      const mask = emitGenericAttentionMask(
        P.mask === 'none'
          ? { kind: 'none' }
          : { kind: 'window', alignment: ne(a.mask_top_left, 0), left: a.mask_left, right: a.mask_right },
        seqlenQ,
        seqlenK,
      );
      const maskCode = mask.masking
        ? new GenericAttentionMaskCode({
            masking: true,
            y: b.let('mask_y', int32, mask.y),
            x: b.let('mask_x', int32, mask.x),
            seqlenQ,
            seqlenK,
          })
        : mask;
      const base = (bb: BlockBuilder, name: string, ptr: VarExpr, strides: readonly [Expr, Expr, Expr], head: Expr, row: Expr): Expr =>
        bb.let(
          name,
          ptr.type,
          add(ptr, add(add(mul(mapBatch, strides[2]), mul(cast(head, int64), strides[1])), mul(cast(row, int64), cast(strides[0], int64)))),
        );
      b.comment('the unified backward workspace, atomic layout: nsplits[1] (16 B), group-mode dq_acc offsets[batch + 1], then dq_acc');
      const offsetsBytes = b.let('offsets_bytes', int32, select(group, bitAnd(add(mul(add(a.batch, 1), 8), 15), ~15), 0));
      const offsetsPtr = b.let('offsets_ptr', pointer(int64, { const: true }), cast(add(a.workspace, 16), pointer(int64, { const: true })));
      const dqAcc = b.let('dq_acc_base', pointer(float32), cast(add(a.workspace, add(16, offsetsBytes)), pointer(float32)));
      // Per batch: [nheadQ][1][sq_b][hdimQ] with sq_b the physical query rows (group mode: the batch's rows).
      const dqBatch = b.let(
        'dq_batch_base',
        int64,
        select(group, index(offsetsPtr, batch), mul(mul(mul(cast(batch, int64), a.nhead_q), cast(a.seqlen_q, int64)), P.headDim)),
      );
      const q = (bb: BlockBuilder, head: Expr) =>
        makeTensorView(
          base(bb, 'q_base', a.q, [a.q_stride_row, a.q_stride_head, a.q_stride_batch], head, rowQ),
          input(rowsQ, 'q_stride_row', P.headDim),
          {
            elementBytes: e,
          },
        );
      const dO = (bb: BlockBuilder, head: Expr) =>
        makeTensorView(
          base(bb, 'do_base', a.do_, [a.do_stride_row, a.do_stride_head, a.do_stride_batch], head, rowQ),
          input(rowsQ, 'do_stride_row', P.headDimV),
          { elementBytes: e },
        );
      const lseAt = (bb: BlockBuilder, name: string, ptr: VarExpr, head: Expr): Expr =>
        bb.let(
          name,
          ptr.type,
          add(ptr, add(add(mul(mapBatch, a.lse_stride_batch), mul(cast(head, int64), a.lse_stride_head)), cast(rowQ, int64))),
        );
      this.pipeline.emit(b, t, {
        k: makeTensorView(
          base(b, 'k_base', a.k, [a.k_stride_row, a.k_stride_head, a.k_stride_batch], headK, rowK),
          input(rowsK, 'k_stride_row', P.headDim),
          {
            elementBytes: e,
          },
        ),
        v: makeTensorView(
          base(b, 'v_base', a.v, [a.v_stride_row, a.v_stride_head, a.v_stride_batch], headK, rowK),
          input(rowsK, 'v_stride_row', P.headDimV),
          { elementBytes: e },
        ),
        q,
        dO,
        lseRow: (bb, head) => lseAt(bb, 'lse_row', a.lse, head),
        dRow: (bb, head) => lseAt(bb, 'd_row', a.d, head),
        dqRow: (bb, head) =>
          bb.let('dq_row0', pointer(float32), add(dqAcc, add(dqBatch, mul(mul(cast(head, int64), cast(seqlenQ, int64)), P.headDim)))),
        dk: makeTensorView(
          base(b, 'dk_base', a.dk, [a.dk_stride_row, a.dk_stride_head, a.dk_stride_batch], headK, rowK),
          output('dk_stride_row', P.headDim),
          { elementBytes: e },
        ),
        dv: makeTensorView(
          base(b, 'dv_base', a.dv, [a.dv_stride_row, a.dv_stride_head, a.dv_stride_batch], headK, rowK),
          output('dv_stride_row', P.headDimV),
          { elementBytes: e },
        ),
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
          seqlen_k_slot: slotLen,
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
