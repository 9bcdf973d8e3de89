// The producer warpgroup of the sparse MLA kernels: gathers the selected latent rows of each key
// tile into the two-stage ring with cp.async (FlashMLA's producer gathers rows itself: Hopper's TMA
// has no row gather), with a validity byte per token.
import {
  add,
  and,
  bitAnd,
  bitXor,
  cast,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  eq,
  fenceProxyAsyncShared,
  ge,
  gt,
  index,
  int32,
  int64,
  lt,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  pointer,
  select,
  setMaxNReg,
  shr,
  sub,
  uint32,
  uint8,
  bool,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_TILE } from './dsaSparseMlaSmem.ts';
import { DSA_SPARSE_MLA_ROW_CHUNKS, dsaBf16RowBytes, emitDsaSwizzledRowCopy } from './emitDsaSwizzledRowCopy.ts';

/** Producer threads: two per token of a 64-token tile, each copying half of its 72 chunks. */
export const DSA_SPARSE_MLA_PRODUCER_THREADS = 128;

/** The stage's full barrier: once this thread's copies of the tile are in, fence them for wgmma and arrive. */
function emitLanded(b: BlockBuilder, cta: DsaSparseMlaCta, stage: Expr): void {
  b.expr(cpAsyncWaitGroup(cta.target, 0));
  b.expr(fenceProxyAsyncShared(cta.target));
  b.expr(mbarrierArrive(cta.target, cta.full(stage)));
}

/**
 * Emits the producer (threads [first, first + 128) of the block, `registers` after setmaxnreg):
 * for key tile it (stage it mod 2, round it / 2) it waits empty[stage], then thread pair (2r, 2r + 1)
 * reads index entry 64·it + r (valid when below the block's length and inside [0, s_kv)), writes
 * the validity byte and copies the row's 1152 bytes (zero-filled when invalid) into the stage's
 * swizzled slabs. Tile it's full barrier (128 arrivals) is released before the wait for tile it + 1's
 * stage, so the consumers of tile it never wait on the producer's own wait.
 */
export function emitDsaSparseMlaProducer(b: BlockBuilder, cta: DsaSparseMlaCta, first: number, registers: number): void {
  const { target, args } = cta;
  b.comment(`producer warpgroup: registers down to ${registers}; two threads per gathered token`);
  b.expr(setMaxNReg(target, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const row = b.let('g_row', int32, shr(ptid, 1));
  const half = b.let('g_half', int32, bitAnd(ptid, 1));
  const validBytes = b.let('valid_bytes', pointer(uint8), add(cta.smem, cta.layout.valid));
  b.forRange({ name: 'it', to: cta.tiles }, (l, it) => {
    l.if(gt(it, 0), (x) => emitLanded(x, cta, bitAnd(sub(it, 1), 1)));
    const s = l.let('s', int32, bitAnd(it, 1));
    l.expr(mbarrierWaitParity(target, cta.empty(s), cast(bitXor(bitAnd(shr(it, 1), 1), 1), uint32)));
    const entry = l.let('entry', int32, add(mul(it, DSA_SPARSE_MLA_TILE), row));
    const idx = l.var('kv_index', int32, -1);
    l.if(lt(entry, cta.len), (x) => x.assign(idx, index(args.indices, cast(entry, int64))));
    const valid = l.let('kv_valid', bool, and(ge(idx, 0), lt(idx, args.sKv)));
    l.if(eq(half, 0), (x) => x.assign(index(validBytes, add(mul(s, DSA_SPARSE_MLA_TILE), row)), cast(valid, uint8)));
    const source = dsaBf16RowBytes(l, 'kv_row', args.kv, select(valid, idx, 0), args.kvStride);
    const chunks = DSA_SPARSE_MLA_ROW_CHUNKS / 2;
    emitDsaSwizzledRowCopy(l, target, {
      slabs: l.let('stage_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, s))),
      row,
      source,
      first: mul(half, chunks),
      count: chunks,
      srcBytes: cast(select(valid, 16, 0), uint32),
    });
    l.expr(cpAsyncCommitGroup(target));
  });
  b.if(gt(cta.tiles, 0), (x) => emitLanded(x, cta, bitAnd(sub(cta.tiles, 1), 1)));
}
