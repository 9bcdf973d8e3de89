// The producer warpgroup of the sparse MLA kernels: gathers the selected latent rows of each key
// tile into the four-stage ring with cp.async (FlashMLA's producer gathers rows itself: Hopper's TMA
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

/** Producer threads: each warp gathers 8 tokens of a 32-token tile, 4 at a time, 8 lanes per token (one 128-byte line per lane group and slab). */
export const DSA_SPARSE_MLA_PRODUCER_THREADS = 128;

/** Lanes that copy one token's row together: lane l copies chunk l mod 8 of each of its 9 slabs. */
const LANES_PER_ROW = 8;
/** Tokens a producer thread copies per tile (32 tokens over 128 threads / 8 lanes). */
const ROWS_PER_THREAD = (DSA_SPARSE_MLA_KEYS * LANES_PER_ROW) / 128;

/** The bf16 latent rows the producer gathers. */
export interface DsaSparseMlaBf16Source {
  /** `const bf16*` latent rows [sKv][kvStride]. */
  readonly kv: Expr;
  /** `int` elements between latent rows. */
  readonly kvStride: Expr;
  /** `int` latent rows (valid indices are in [0, sKv)). */
  readonly sKv: Expr;
}

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
 * for key tile it (stage it mod 4, round it / 4) it waits empty[stage], then the 8 lanes of token r
 * (threads 8r' … 8r' + 7 with r = r' and r' + 16) read index entry 32·it + r (valid when below the
 * block's length and inside [0, s_kv)), one writes the validity byte, and lane c copies 16-byte
 * chunk c of each of the row's 9 slabs (zero-filled when invalid), so each warp-wide copy reads
 * whole 128-byte lines of 4 rows. Tile it − 1's full barrier (128 arrivals) is released once its copies are in, while tile
 * it's are in flight: the consumers' pair p needs tiles 2p and 2p + 1, whose arrivals never wait for
 * pair p's own release.
 */
export function emitDsaSparseMlaProducer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  source: DsaSparseMlaBf16Source,
  first: number,
  registers: number,
): void {
  const { target, args } = cta;
  b.comment(
    `producer warpgroup: registers down to ${registers}; ${LANES_PER_ROW} lanes per gathered token, ${ROWS_PER_THREAD} tokens per thread`,
  );
  b.expr(setMaxNReg(target, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const lane = b.let('g_lane', int32, bitAnd(ptid, LANES_PER_ROW - 1));
  const group = b.let('g_group', int32, shr(ptid, 3));
  const validBytes = b.let('valid_bytes', pointer(uint8), add(cta.smem, cta.layout.valid));
  b.forRange({ name: 'it', to: cta.tiles }, (l, it) => {
    const s = l.let('s', int32, bitAnd(it, DSA_SPARSE_MLA_STAGES - 1));
    l.expr(mbarrierWaitParity(target, cta.empty(s), cast(bitXor(bitAnd(shr(it, 2), 1), 1), uint32)));
    const slabs = l.let('stage_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, s)));
    for (let g = 0; g < ROWS_PER_THREAD; g++) {
      const row = l.let(`g_row${g}`, int32, add(group, (128 / LANES_PER_ROW) * g));
      const entry = l.let('entry', int32, add(mul(it, DSA_SPARSE_MLA_KEYS), row));
      const idx = l.var('kv_index', int32, -1);
      l.if(lt(entry, cta.len), (x) => x.assign(idx, index(args.indices, cast(entry, int64))));
      const valid = l.let('kv_valid', bool, and(ge(idx, 0), lt(idx, source.sKv)));
      l.if(eq(lane, 0), (x) => x.assign(index(validBytes, add(mul(s, DSA_SPARSE_MLA_KEYS), row)), cast(valid, uint8)));
      emitDsaSwizzledRowCopy(l, target, {
        slabs,
        slabBytes: DSA_SPARSE_MLA_K_SLAB_BYTES,
        row,
        source: dsaBf16RowBytes(l, 'kv_row', source.kv, select(valid, idx, 0), source.kvStride),
        first: lane,
        count: DSA_SPARSE_MLA_ROW_CHUNKS / LANES_PER_ROW,
        stride: LANES_PER_ROW,
        srcBytes: cast(select(valid, 16, 0), uint32),
      });
    }
    l.expr(cpAsyncCommitGroup(target));
    l.if(gt(it, 0), (x) => emitLanded(x, cta, bitAnd(sub(it, 1), DSA_SPARSE_MLA_STAGES - 1), 1));
  });
  b.if(gt(cta.tiles, 0), (x) => emitLanded(x, cta, bitAnd(sub(cta.tiles, 1), DSA_SPARSE_MLA_STAGES - 1), 0));
}
