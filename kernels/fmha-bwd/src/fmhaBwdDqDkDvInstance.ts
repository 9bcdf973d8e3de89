// The dq_dk_dv kernel of attention backward: a Policy bound to @tilekit/fmha's sm_90a backward
// pipeline, with its key (= entry point), parameters and launch shape. dQ partials go to the
// unified workspace (see @tilekit/fmha's FmhaBwdWorkspace layout): the kernel finds nsplits, the
// group-mode offsets and dq_acc itself from the workspace pointer and the batch count.
import {
  add,
  bitAnd,
  bool,
  cast,
  div,
  float32,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
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
} from '@tilekit/codegen';
import {
  emitGenericAttentionMask,
  FmhaBwdWsPipeline,
  GenericAttentionMaskCode,
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

/** The workspace's head: nsplits (int32, `batch` entries in deterministic group mode, else 1), then in group mode the int64 dq_acc offsets (batch + 1), each region 16-byte aligned; dq_acc follows. */
export function dqAccHeadBytes(batch: number, group: boolean, deterministic: boolean): number {
  const align = (x: number): number => Math.ceil(x / 16) * 16;
  return align(4 * (group && deterministic ? batch : 1)) + (group ? align(8 * (batch + 1)) : 0);
}

function params(policy: FmhaBwdDqDkDvPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const count = { range: [0, FMHA_BWD_MAX_SEQLEN] as const };
  const big = { range: [0, 2 ** 50] as const };
  return {
    q_map: kernelParam.tensorMap(),
    k_map: kernelParam.tensorMap(),
    v_map: kernelParam.tensorMap(),
    do_map: kernelParam.tensorMap(),
    lse: kernelParam.pointer(float32, { const: true, align: 4 }),
    d: kernelParam.pointer(float32, { const: true, align: 4 }),
    lse_stride_head: kernelParam.i64(big),
    lse_stride_batch: kernelParam.i64(big),
    dk: kernelParam.pointer(element, { align: 4 }),
    dv: kernelParam.pointer(element, { align: 4 }),
    dk_stride_row: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
    dk_stride_head: kernelParam.i64(big),
    dk_stride_batch: kernelParam.i64(big),
    dv_stride_row: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
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
    mask_left: kernelParam.i32({ range: [-1, FMHA_BWD_MAX_SEQLEN] }),
    mask_right: kernelParam.i32({ range: [-1, FMHA_BWD_MAX_SEQLEN] }),
    mask_top_left: kernelParam.i32({ range: [0, 1] }),
    ...policy.scoreModifier?.params(),
  };
}

type Params = ReturnType<typeof params>;

/** The launch: grid (key tiles or splits, key heads, batch), threads, dynamic shared memory. */
export interface FmhaBwdLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

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
    super({
      key: dqDkDvKey(frozen, target),
      policy: frozen,
      target,
      params: params(frozen, target),
      threads: pipeline.threads,
      sharedBytes: pipeline.sharedBytes,
    });
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
    return { grid: [Math.max(1, gridX), nheadK, batch], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes };
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
      const group = b.let('group_mode', bool, ne(select(a.seqstart_q, 1, 0), 0));
      const rowQ = b.declare('row_q', int32, 0, { storage: 'mutable' });
      const rowK = b.declare('row_k', int32, 0, { storage: 'mutable' });
      const seqlenQ = b.declare('sq', int32, a.seqlen_q, { storage: 'mutable' });
      const seqlenK = b.declare('sk', int32, a.seqlen_k, { storage: 'mutable' });
      const slotK = b.declare('sk_slot', int32, a.seqlen_k, { storage: 'mutable' });
      b.if(group, (g) => {
        g.assign(rowQ, index(a.seqstart_q, batch));
        g.assign(rowK, index(a.seqstart_k, batch));
        g.assign(seqlenQ, sub(index(a.seqstart_q, add(batch, 1)), rowQ));
        g.assign(slotK, sub(index(a.seqstart_k, add(batch, 1)), rowK));
        g.assign(seqlenK, slotK);
        g.if(a.seqlen_k_ptr, (x) => x.assign(seqlenK, index(a.seqlen_k_ptr, batch)));
      });
      const mapBatch = b.let('map_batch', int32, select(group, 0, batch));
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
      b.comment('the unified workspace: nsplits[], group-mode dq_acc offsets[], then dq_acc');
      const nsplitsCount = b.let('nsplits_count', int32, split ? select(group, a.batch, 1) : 1);
      const nsplitsBytes = b.let('nsplits_bytes', int32, bitAnd(add(mul(nsplitsCount, 4), 15), ~15));
      const offsetsBytes = b.let('offsets_bytes', int32, select(group, bitAnd(add(mul(add(a.batch, 1), 8), 15), ~15), 0));
      const nsplitsPtr = b.let('nsplits_ptr', pointer(int32, { const: true }), cast(a.workspace, pointer(int32, { const: true })));
      const nsplits = b.let('nsplits', int32, index(nsplitsPtr, split ? select(group, batch, 0) : 0));
      const offsetsPtr = b.let(
        'offsets_ptr',
        pointer(int64, { const: true }),
        cast(add(a.workspace, nsplitsBytes), pointer(int64, { const: true })),
      );
      const dqAcc = b.let('dq_acc', pointer(float32), cast(add(a.workspace, add(nsplitsBytes, offsetsBytes)), pointer(float32)));
      // Per batch: [nhead, nsplits_b, seqq_b, hdim_q] with seqq_b the physical query rows.
      const batchBase = b.let(
        'dq_batch_base',
        int64,
        select(
          group,
          index(offsetsPtr, batch),
          mul(mul(mul(cast(batch, int64), a.nhead_q), mul(cast(nsplits, int64), cast(a.seqlen_q, int64))), P.headDim),
        ),
      );
      // Split mode walks the physical key slot (the workspace's nsplits count it): tiles past a
      // shorter logical seqlen_k still store their (zero) dQ partial, so no split is left unwritten.
      const kvTiles = b.let('kv_tiles', int32, div(add(split ? slotK : seqlenK, P.tileN - 1), P.tileN));
      const block = b.let('kv_block', int32, cast(t.blockIdx('x'), int32));
      const keyTiles = split
        ? { first: block, step: nsplits, count: kvTiles }
        : { first: block, step: cast(t.gridDim('x'), int32), count: kvTiles };
      const dkBase = b.let(
        'dk_base',
        a.dk.type,
        add(
          a.dk,
          add(
            add(mul(cast(batch, int64), a.dk_stride_batch), mul(cast(headK, int64), a.dk_stride_head)),
            mul(cast(rowK, int64), cast(a.dk_stride_row, int64)),
          ),
        ),
      );
      const dvBase = b.let(
        'dv_base',
        a.dv.type,
        add(
          a.dv,
          add(
            add(mul(cast(batch, int64), a.dv_stride_batch), mul(cast(headK, int64), a.dv_stride_head)),
            mul(cast(rowK, int64), cast(a.dv_stride_row, int64)),
          ),
        ),
      );
      const e = getDType(P.dtype).bytes;
      this.pipeline.emit(b, t, {
        qMap: a.q_map,
        kMap: a.k_map,
        vMap: a.v_map,
        doMap: a.do_map,
        lseRow: (bb: BlockBuilder, head: Expr) =>
          bb.let(
            'lse_row',
            a.lse.type,
            add(
              a.lse,
              add(
                add(mul(cast(select(group, 0, batch), int64), a.lse_stride_batch), mul(cast(head, int64), a.lse_stride_head)),
                cast(rowQ, int64),
              ),
            ),
          ),
        dRow: (bb: BlockBuilder, head: Expr) =>
          bb.let(
            'd_row',
            a.d.type,
            add(
              a.d,
              add(
                add(mul(cast(select(group, 0, batch), int64), a.lse_stride_batch), mul(cast(head, int64), a.lse_stride_head)),
                cast(rowQ, int64),
              ),
            ),
          ),
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
          bb.let(
            'dq_row0',
            pointer(float32),
            add(
              dqAcc,
              add(
                batchBase,
                mul(
                  mul(add(mul(cast(head, int64), nsplits), split ? cast(block, int64) : cast(0, int64)), cast(seqlenQ, int64)),
                  P.headDim,
                ),
              ),
            ),
          ),
        dk: makeTensorView(dkBase, dkDesc, { elementBytes: e }),
        dv: makeTensorView(dvBase, dvDesc, { elementBytes: e }),
        symbols: { seqlen_k: seqlenK, dk_stride_row: a.dk_stride_row, dv_stride_row: a.dv_stride_row },
        ...(P.scoreModifier ? { scoreModifier: P.scoreModifier.bind(a, { seqlenQ, seqlenK }) } : {}),
      });
    });
  }
}
