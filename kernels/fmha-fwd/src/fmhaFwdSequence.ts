// The per-block prologue of the forward attention kernels (the sm_90a TMA/wgmma one and the sm_80
// cp.async/mma.sync one): the block's sequence in batch or group (varlen) mode, its window mask,
// and the (batch, head, row) bases of its tensors. Both kernels take these parameters under the
// same names, so the CUDA they emit reads the same.
import {
  add,
  bool,
  cast,
  ge,
  index,
  int32,
  int64,
  mul,
  ne,
  select,
  sub,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { emitGenericAttentionMask, GenericAttentionMaskCode, type FmhaFwdWsArgs } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView } from '@tilekit/tile';
import { FMHA_MAX_SEQLEN } from './fmhaFwdParams.ts';
import type { FmhaFwdMaskKind } from './fmhaFwdInstance.ts';

/** The kernel parameters the prologue reads (as the forward kernels name them). */
export interface FmhaFwdSequenceParams {
  readonly seqlen_q: Expr;
  readonly seqlen_k: Expr;
  /** Group mode when not null: sequence b is rows [seqstart_q[b], seqstart_q[b + 1]). */
  readonly seqstart_q: Expr;
  readonly seqstart_k: Expr;
  /** Group mode, optional: per-sequence key counts overriding the seqstart_k differences. */
  readonly seqlen_k_ptr: Expr;
  readonly mask_left: Expr;
  readonly mask_right: Expr;
  readonly mask_top_left: Expr;
}

/** The block's sequence: group mode, its first physical query/key rows and its lengths. */
export interface FmhaFwdSequence {
  readonly group: VarExpr;
  readonly rowQ: VarExpr;
  readonly rowK: VarExpr;
  readonly seqlenQ: VarExpr;
  readonly seqlenK: VarExpr;
}

/**
 * Resolves the sequence of `batch`: batch mode takes seqlen_q / seqlen_k rows from row 0; group
 * mode (a non-null seqstart_q) the rows [seqstart[b], seqstart[b + 1]) of one "batch", with a
 * per-batch seqlen_k array (when given) overriding the key count. Blocks whose first query row
 * `m0` lies past the sequence return.
 */
export function emitFmhaFwdSequence(b: BlockBuilder, a: FmhaFwdSequenceParams, batch: Expr, m0: Expr): FmhaFwdSequence {
  const group = b.let('group_mode', bool, ne(select(a.seqstart_q, 1, 0), 0));
  const rowQ = b.declare('row_q', int32, 0, { storage: 'mutable' });
  const rowK = b.declare('row_k', int32, 0, { storage: 'mutable' });
  const seqlenQ = b.declare('sq', int32, a.seqlen_q, { storage: 'mutable' });
  const seqlenK = b.declare('sk', int32, a.seqlen_k, { storage: 'mutable' });
  b.if(group, (g) => {
    g.assign(rowQ, index(a.seqstart_q, batch));
    g.assign(rowK, index(a.seqstart_k, batch));
    g.assign(seqlenQ, sub(index(a.seqstart_q, add(batch, 1)), rowQ));
    g.assign(seqlenK, sub(index(a.seqstart_k, add(batch, 1)), rowK));
    g.if(a.seqlen_k_ptr, (x) => x.assign(seqlenK, index(a.seqlen_k_ptr, batch)));
  });
  b.if(ge(m0, seqlenQ), (x) => x.return());
  return { group, rowQ, rowK, seqlenQ, seqlenK };
}

/**
 * The instance's mask over the block's sequence: none, or the run-time window (left, right,
 * top-left or bottom-right alignment) with its (y, x) held in locals, since every edge test and
 * element predicate reads them.
 */
export function emitFmhaFwdMask(
  b: BlockBuilder,
  kind: FmhaFwdMaskKind,
  a: FmhaFwdSequenceParams,
  seq: FmhaFwdSequence,
): GenericAttentionMaskCode {
  const { seqlenQ, seqlenK } = seq;
  const mask = emitGenericAttentionMask(
    kind === 'none' ? { kind: 'none' } : { kind: 'window', alignment: ne(a.mask_top_left, 0), left: a.mask_left, right: a.mask_right },
    seqlenQ,
    seqlenK,
  );
  return mask.masking
    ? new GenericAttentionMaskCode({
        masking: true,
        y: b.let('mask_y', int32, mask.y),
        x: b.let('mask_x', int32, mask.x),
        seqlenQ,
        seqlenK,
      })
    : mask;
}

/** Where a (batch, head) slice of a tensor starts, plus a row offset already in elements. */
export interface FmhaFwdBaseSpec {
  readonly batch: Expr;
  readonly batchStride: Expr;
  readonly head: Expr;
  readonly headStride: Expr;
  /** int64 element offset of the block's first row (and split, where there is one). */
  readonly rowOffset: Expr;
}

function baseOffset(s: FmhaFwdBaseSpec): Expr {
  return add(add(mul(cast(s.batch, int64), s.batchStride), mul(cast(s.head, int64), s.headStride)), s.rowOffset);
}

/** `name` = ptr + batch·batchStride + head·headStride + rowOffset (64-bit arithmetic), as a local of ptr's type. */
export function emitFmhaFwdBase(b: BlockBuilder, name: string, ptr: VarExpr, s: FmhaFwdBaseSpec): VarExpr {
  return b.let(name, ptr.type, add(ptr, baseOffset(s)));
}

/** The LSE base as `emitFmhaFwdBase`, except that a null `lse` stays null (the pipelines skip its stores then). */
export function emitFmhaFwdLseBase(b: BlockBuilder, lse: VarExpr, s: FmhaFwdBaseSpec): VarExpr {
  return b.let('lse_base', lse.type, select(lse, add(lse, baseOffset(s)), lse));
}

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
  /** Extra int64 element offsets of O and LSE (a split's slice of the workspace). */
  readonly oOffset?: Expr;
  readonly lseOffset?: Expr;
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
  const coords = (row0: Expr, h: Expr) => (d0: number, row: Expr) =>
    [cast(d0, int32), add(row0, row), h, mapBatch].map((x) => cast(x, int32));
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
      vCoords: coords(rowK, headK),
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
