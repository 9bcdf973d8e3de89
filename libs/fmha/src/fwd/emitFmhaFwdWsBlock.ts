// The per-block prologue of the sm_90a forward attention kernels (dense and sparse): the query
// tile, its sequence and mask, the O and LSE bases and the TMA coordinates, as the warp-specialized
// pipeline's arguments.
import { add, cast, int32, int64, mul, select, sub, type BlockBuilder, type Expr, type Target, type VarExpr } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView } from '@tilekit/tile';
import type { FmhaFwdWsArgs } from '../pipeline/fmhaFwdWsPipeline.ts';
import { emitFmhaFwdBase, emitFmhaFwdLseBase } from './emitFmhaFwdBase.ts';
import { emitFmhaFwdMask, emitFmhaFwdSequence, type FmhaFwdSequence, type FmhaFwdSequenceParams } from './emitFmhaFwdSequence.ts';
import type { FmhaFwdMaskKind } from './fmhaFwdMaskKind.ts';
import { FMHA_MAX_SEQLEN } from './fmhaFwdTileParams.ts';

/** The kernel parameters {@link emitFmhaFwdWsBlock} reads (the sm_90a forward kernels' names). */
export interface FmhaFwdWsBlockParams extends FmhaFwdSequenceParams {
  readonly q_map: Expr;
  readonly k_map: Expr;
  readonly v_map: Expr;
  readonly o: VarExpr;
  readonly o_stride_row: Expr;
  readonly o_stride_head: Expr;
  readonly o_stride_batch: Expr;
  readonly lse: VarExpr;
  readonly lse_stride_head: Expr;
  readonly lse_stride_batch: Expr;
  readonly scale_log2: Expr;
}

/** What the block is and where it writes, for {@link emitFmhaFwdWsBlock}. */
export interface FmhaFwdWsBlockSpec {
  readonly target: Target;
  readonly mask: FmhaFwdMaskKind;
  readonly tileM: number;
  readonly headDimV: number;
  /** Bytes of an O element (the dtype, or 4 for an fp32 split workspace). */
  readonly outputBytes: number;
  readonly batch: Expr;
  readonly head: Expr;
  readonly headK: Expr;
  /** Extra int64 element offsets of O and LSE (a split's slice of the workspace, a CTA's columns of O). */
  readonly oOffset?: Expr;
  readonly lseOffset?: Expr;
  /** The block's first column of V (`int`; a CTA's columns of O and V within a cluster); default 0. */
  readonly vColumn0?: Expr;
}

/** The block's query tile, its sequence and the pipeline arguments every sm_90a forward kernel shares. */
export interface FmhaFwdWsBlock {
  readonly tile: VarExpr;
  readonly m0: VarExpr;
  readonly seq: FmhaFwdSequence;
  readonly args: FmhaFwdWsArgs;
}

/**
 * The per-block prologue of the sm_90a forward kernels (dense and sparse): the query tile (the last
 * first under a mask: they see the most keys), its sequence and mask, the O and LSE bases, and the
 * TMA coordinates of Q (head) and K/V (the head's key head), as the pipeline's arguments; the caller
 * adds what its kernel has beyond them (a split, a sparse key walk, the PV skip).
 */
export function emitFmhaFwdWsBlock(b: BlockBuilder, a: FmhaFwdWsBlockParams, spec: FmhaFwdWsBlockSpec): FmhaFwdWsBlock {
  const t = spec.target;
  const { batch, head, headK } = spec;
  const tile = b.let(
    'q_tile',
    int32,
    spec.mask === 'none' ? cast(t.blockIdx('x'), int32) : sub(sub(cast(t.gridDim('x'), int32), 1), cast(t.blockIdx('x'), int32)),
  );
  const m0 = b.let('m0', int32, mul(tile, spec.tileM));
  const seq = emitFmhaFwdSequence(b, a, batch, m0);
  const { group, rowQ, rowK, seqlenQ, seqlenK } = seq;
  const mapBatch = b.let('map_batch', int32, select(group, 0, batch));
  const maskCode = emitFmhaFwdMask(b, spec.mask, a, seq);
  const plus = (x: Expr, extra: Expr | undefined): Expr => (extra === undefined ? x : add(x, extra));
  const oBase = emitFmhaFwdBase(b, 'o_base', a.o, {
    batch,
    batchStride: a.o_stride_batch,
    head,
    headStride: a.o_stride_head,
    rowOffset: plus(mul(cast(rowQ, int64), cast(a.o_stride_row, int64)), spec.oOffset),
  });
  const lseBase = emitFmhaFwdLseBase(b, a.lse, {
    batch,
    batchStride: a.lse_stride_batch,
    head,
    headStride: a.lse_stride_head,
    rowOffset: plus(cast(rowQ, int64), spec.lseOffset),
  });
  const rowsQ = symbol('seqlen_q', { max: FMHA_MAX_SEQLEN });
  const oStride = symbol('o_stride_row', { max: 2 ** 31 - 1 });
  const oDesc = makeNaiveTensorDescriptor([rowsQ, spec.headDimV], [oStride, 1], { vectorLength: 2 });
  const coords = (row0: Expr, h: Expr, col0?: Expr) => (d0: Expr | number, row: Expr) =>
    [col0 === undefined ? cast(d0, int32) : add(col0, d0), add(row0, row), h, mapBatch].map((x) => cast(x, int32));
  return {
    tile,
    m0,
    seq,
    args: {
      qMap: a.q_map,
      kMap: a.k_map,
      vMap: a.v_map,
      qCoords: coords(rowQ, head),
      kCoords: coords(rowK, headK),
      vCoords: coords(rowK, headK, spec.vColumn0),
      seqlenQ,
      seqlenK,
      m0,
      scaleLog2: a.scale_log2,
      mask: maskCode,
      o: makeTensorView(oBase, oDesc, { elementBytes: spec.outputBytes }),
      symbols: { seqlen_q: seqlenQ, o_stride_row: a.o_stride_row },
      lse: lseBase,
    },
  };
}
