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
import { DSA_SPARSE_MLA_K_SLAB_BYTES, DSA_SPARSE_MLA_KEYS, DSA_SPARSE_MLA_STAGES } from './dsaSparseMlaSmem.ts';
import { DSA_SPARSE_MLA_ROW_CHUNKS, dsaBf16RowBytes, emitDsaSwizzledRowCopy } from './emitDsaSwizzledRowCopy.ts';

/** Producer threads: four per token of a 32-token tile, each copying a quarter of its 72 chunks. */
export const DSA_SPARSE_MLA_PRODUCER_THREADS = 128;

/** Threads per gathered token. */
const THREADS_PER_ROW = 4;

/**
 * The stage's full barrier: once this thread's copies of the tile are in (all but its `pending` newest
 * groups), fence them for wgmma and arrive.
 */
function emitLanded(b: BlockBuilder, cta: DsaSparseMlaCta, stage: Expr, pending: number): void {
  b.expr(cpAsyncWaitGroup(cta.target, pending));
  b.expr(fenceProxyAsyncShared(cta.target));
  b.expr(mbarrierArrive(cta.target, cta.full(stage)));
}

/**
 * Emits the producer (threads [first, first + 128) of the block, `registers` after setmaxnreg):
 * for key tile it (stage it mod 4, round it / 4) it waits empty[stage], then threads 4r … 4r + 3
 * read index entry 32·it + r (valid when below the block's length and inside [0, s_kv)), write the
 * validity byte and copy the row's 1152 bytes (zero-filled when invalid) into the stage's swizzled
 * slabs. Tile it − 1's full barrier (128 arrivals) is released once its copies are in, while tile
 * it's are in flight: the consumers' pair p needs tiles 2p and 2p + 1, whose arrivals never wait for
 * pair p's own release.
 */
export function emitDsaSparseMlaProducer(b: BlockBuilder, cta: DsaSparseMlaCta, first: number, registers: number): void {
  const { target, args } = cta;
  b.comment(`producer warpgroup: registers down to ${registers}; two threads per gathered token`);
  b.expr(setMaxNReg(target, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const row = b.let('g_row', int32, shr(ptid, 2));
  const part = b.let('g_part', int32, bitAnd(ptid, THREADS_PER_ROW - 1));
  const validBytes = b.let('valid_bytes', pointer(uint8), add(cta.smem, cta.layout.valid));
  b.forRange({ name: 'it', to: cta.tiles }, (l, it) => {
    const s = l.let('s', int32, bitAnd(it, DSA_SPARSE_MLA_STAGES - 1));
    l.expr(mbarrierWaitParity(target, cta.empty(s), cast(bitXor(bitAnd(shr(it, 2), 1), 1), uint32)));
    const entry = l.let('entry', int32, add(mul(it, DSA_SPARSE_MLA_KEYS), row));
    const idx = l.var('kv_index', int32, -1);
    l.if(lt(entry, cta.len), (x) => x.assign(idx, index(args.indices, cast(entry, int64))));
    const valid = l.let('kv_valid', bool, and(ge(idx, 0), lt(idx, args.sKv)));
    l.if(eq(part, 0), (x) => x.assign(index(validBytes, add(mul(s, DSA_SPARSE_MLA_KEYS), row)), cast(valid, uint8)));
    const source = dsaBf16RowBytes(l, 'kv_row', args.kv, select(valid, idx, 0), args.kvStride);
    const chunks = DSA_SPARSE_MLA_ROW_CHUNKS / THREADS_PER_ROW;
    emitDsaSwizzledRowCopy(l, target, {
      slabs: l.let('stage_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, s))),
      slabBytes: DSA_SPARSE_MLA_K_SLAB_BYTES,
      row,
      source,
      first: mul(part, chunks),
      count: chunks,
      srcBytes: cast(select(valid, 16, 0), uint32),
    });
    l.expr(cpAsyncCommitGroup(target));
    l.if(gt(it, 0), (x) => emitLanded(x, cta, bitAnd(sub(it, 1), DSA_SPARSE_MLA_STAGES - 1), 1));
  });
  b.if(gt(cta.tiles, 0), (x) => emitLanded(x, cta, bitAnd(sub(cta.tiles, 1), DSA_SPARSE_MLA_STAGES - 1), 0));
}
