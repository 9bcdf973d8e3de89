// The convert_dq kernel of attention backward (CK-tile's FmhaBwdConvertQGradKernel, unified
// workspace revision): dQ = Σ over the splits, in order, of the fp32 dq_acc partials, cast to
// fp16/bf16 and stored with dQ's strides. It reads nsplits (and in group mode the dq_acc offsets)
// from the head of the workspace, so it knows nothing of the dq_dk_dv instance's key tile (kN0):
// one convert_dq instance serves every dq_dk_dv tile size.
import {
  add,
  bitAnd,
  cast,
  float32,
  index,
  int32,
  int64,
  kernelParam,
  mul,
  pointer,
  select,
  sm90a,
  uint8,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { emitRowTileSequence } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { ArgumentError, getDType } from '@tilekit/numeric';
import {
  BlockEmitter,
  castTile,
  clearTile,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  storeTile,
  sweepTile,
} from '@tilekit/tile';
import { FMHA_BWD_ROW_MAX_ROWS, FmhaBwdRowKernel, fmhaBwdRowSequenceParams, type FmhaBwdRowKernelPolicy } from './fmhaBwdRowKernel.ts';

/** fp32 elements per 16-byte vector of dq_acc. */
const ACC_VECTOR = 4;
/** dQ elements per store vector: the runner checks dQ's strides are multiples of it. */
export const FMHA_BWD_DQ_STORE_VECTOR = 4;
const ELEMENTS_PER_THREAD = 16;
/** The workspace's region alignment (as @tilekit/fmha's FMHA_BWD_WORKSPACE_ALIGNMENT). */
const ALIGN = 16;

/** The Policy of one convert_dq instance. */
export interface FmhaBwdConvertDqPolicy extends FmhaBwdRowKernelPolicy {
  readonly headDim: number;
  /**
   * Deterministic dQ: in group mode the workspace head holds one nsplits entry per batch
   * (deterministic batch mode and atomic mode: one entry). The only thing it changes is where the
   * offsets and dq_acc start.
   */
  readonly deterministic: boolean;
}

function convertParams(policy: FmhaBwdConvertDqPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const big = { range: [0, 2 ** 50] as const };
  const e = getDType(policy.dtype).bytes;
  return {
    workspace: kernelParam.pointer(uint8, { const: true, align: 16 }),
    dq: kernelParam.pointer(element, { align: FMHA_BWD_DQ_STORE_VECTOR * e }),
    dq_stride_row: kernelParam.i32({ range: [FMHA_BWD_DQ_STORE_VECTOR, 2 ** 31 - FMHA_BWD_DQ_STORE_VECTOR] }),
    dq_stride_head: kernelParam.i64(big),
    dq_stride_batch: kernelParam.i64(big),
    batch: kernelParam.i32({ range: [1, 65535] }),
    nhead_q: kernelParam.i32({ range: [1, 65535] }),
    ...fmhaBwdRowSequenceParams(),
  };
}

type ConvertParams = ReturnType<typeof convertParams>;

/**
 * One convert_dq kernel. Per block: a tile of rows of one (batch, query head). From the workspace
 * head it reads nsplits_b (entry b in deterministic group mode, else entry 0) and, in group mode,
 * dq_acc_offsets[b] (int64, after the 16-byte-aligned nsplits region); dq_acc starts after the
 * 16-byte-aligned offsets region (batch mode: right after nsplits) and batch b's region is
 * [nhead_q][nsplits_b][sq_b][headDim] (batch mode at b·nhead_q·nsplits·seqlen_q·headDim). dQ rows =
 * Σ_{s = 0 … nsplits_b − 1} dq_acc[h][s][row] in that order (0 splits: dQ = 0), cast and stored.
 * The softmax scale is NOT applied: the dq_dk_dv kernel scales dS, so the partials are already dQ's.
 */
export class FmhaBwdConvertDqInstance extends FmhaBwdRowKernel<FmhaBwdConvertDqPolicy, ConvertParams> {
  constructor(policy: FmhaBwdConvertDqPolicy, target: Target = sm90a) {
    super(policy, target, {
      family: 'fmha_bwd_convert_dq_sm90',
      label: 'convert_dq',
      headDim: { key: 'hdim', tag: 'd', value: policy.headDim },
      vectorLength: ACC_VECTOR,
      elementsPerThread: ELEMENTS_PER_THREAD,
      extraKey: { config: { det: policy.deterministic ? 1 : 0 }, tags: { det: 'det' } },
      check: (p) => {
        if (typeof p.deterministic !== 'boolean') throw new ArgumentError('policy.deterministic', 'must be a boolean', p.deterministic);
      },
      params: convertParams,
    });
  }

  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const M = this.tile.rows;
    const enc = this.tile.encoding;
    const rows = symbol('seqlen_q', { max: FMHA_BWD_ROW_MAX_ROWS });
    const dqStride = symbol('dq_stride_row', { max: 2 ** 31 - 1 });
    const accDesc = makeNaiveTensorDescriptor([rows, P.headDim], [P.headDim, 1], { vectorLength: ACC_VECTOR });
    const dqDesc = makeNaiveTensorDescriptor([rows, P.headDim], [dqStride, 1], { vectorLength: FMHA_BWD_DQ_STORE_VECTOR });
    const alignUp = (x: ReturnType<typeof mul>) => bitAnd(add(x, ALIGN - 1), ~(ALIGN - 1));
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 4 } }, (b, a) => {
      const {
        batch,
        head,
        m0,
        group,
        rowStart: rowQ,
        seqlen: seqlenQ,
      } = emitRowTileSequence(b, t, { tileRows: M, seqlen: a.seqlen_q, seqstart: a.seqstart_q, batchName: 'batch_idx' });
      b.comment('the workspace head: int32 nsplits[], group mode int64 dq_acc offsets[batch + 1], then fp32 dq_acc');
      const perBatch = P.deterministic ? group : undefined;
      const nsplitsCount = b.let('nsplits_count', int32, perBatch === undefined ? 1 : select(perBatch, a.batch, 1));
      const nsplitsBytes = b.let('nsplits_bytes', int32, alignUp(mul(nsplitsCount, 4)));
      const offsetsBytes = b.let('offsets_bytes', int32, select(group, alignUp(mul(add(a.batch, 1), 8)), 0));
      const nsplitsPtr = b.let('nsplits_ptr', pointer(int32, { const: true }), cast(a.workspace, pointer(int32, { const: true })));
      const nsplits = b.let('nsplits', int32, index(nsplitsPtr, perBatch === undefined ? 0 : select(perBatch, batch, 0)));
      const offsetsPtr = b.let(
        'offsets_ptr',
        pointer(int64, { const: true }),
        cast(add(a.workspace, nsplitsBytes), pointer(int64, { const: true })),
      );
      const dqAcc = b.let(
        'dq_acc',
        pointer(float32, { const: true }),
        cast(add(a.workspace, add(nsplitsBytes, offsetsBytes)), pointer(float32, { const: true })),
      );
      const splitStride = b.let('split_stride', int64, mul(cast(seqlenQ, int64), P.headDim));
      const batchBase = b.let(
        'batch_base',
        int64,
        select(group, index(offsetsPtr, batch), mul(mul(mul(cast(batch, int64), a.nhead_q), cast(nsplits, int64)), splitStride)),
      );
      const split = b.declare(
        'acc_split',
        pointer(float32, { const: true }),
        add(dqAcc, add(batchBase, mul(mul(cast(head, int64), cast(nsplits, int64)), splitStride))),
        { storage: 'mutable' },
      );
      const dqBase = b.let(
        'dq_base',
        a.dq.type,
        add(
          a.dq,
          add(
            add(mul(cast(select(group, 0, batch), int64), a.dq_stride_batch), mul(cast(head, int64), a.dq_stride_head)),
            mul(cast(rowQ, int64), cast(a.dq_stride_row, int64)),
          ),
        ),
      );
      const block = new BlockEmitter(b, t, {
        numThreads: this.threads,
        index: { symbols: { seqlen_q: seqlenQ, dq_stride_row: a.dq_stride_row } },
      });
      const acc = makeDistributedTensor(block, 'dq_sum', enc, float32);
      const part = makeDistributedTensor(block, 'dq_part', enc, float32);
      const out = makeDistributedTensor(block, 'dq_out', enc, t.dtypeType(P.dtype));
      block.threads((th) => clearTile(th, acc));
      const accWindow = makeTileWindow(block, {
        view: makeTensorView(split, accDesc),
        lengths: [M, P.headDim],
        origin: [m0, 0],
        encoding: enc,
        originAlignment: [M, P.headDim],
      });
      b.comment('Σ over the splits in order (a fixed order: the deterministic mode stays bitwise reproducible)');
      block.forRange({ name: 's', to: nsplits }, (inner) => {
        inner.threads((th) => {
          loadTile(th, accWindow, part);
          sweepTile(th, part, (x) => x.b.assign(acc.at(th, x.d), add(acc.at(th, x.d), x.value)));
        });
        inner.b.assign(split, add(split, splitStride));
      });
      const dqWindow = makeTileWindow(block, {
        view: makeTensorView(dqBase, dqDesc, { elementBytes: getDType(P.dtype).bytes }),
        lengths: [M, P.headDim],
        origin: [m0, 0],
        encoding: enc,
        originAlignment: [M, P.headDim],
      });
      block.threads((th) => {
        castTile(th, out, acc);
        storeTile(th, dqWindow, out);
      });
    });
  }
}
