// The producer warpgroup of the sparse MLA decode: gathers the selected tokens of the paged FP8 MLA
// cache (656-byte rows: 512 e4m3, 4 fp32 tile scales, 64 bf16 RoPE) and dequantizes them into the
// same 128B-swizzled bf16 key stages the prefill's producer fills, so the consumers are shared.
import {
  add,
  and,
  bitAnd,
  bitOr,
  bitXor,
  bool,
  call,
  cast,
  cpAsync,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  dequantFp8x2ToBf16x2,
  eq,
  fenceProxyAsyncShared,
  float32,
  ge,
  index,
  int32,
  int64,
  lt,
  mbarrierArrive,
  mbarrierWaitParity,
  member,
  mul,
  opaque,
  pointer,
  select,
  setMaxNReg,
  shl,
  shr,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import {
  DSA_MLA_PAGE_TOKENS,
  DSA_MLA_ROPE_OFFSET,
  DSA_MLA_SCALE_OFFSET,
  DSA_MLA_TILES,
  DSA_MLA_TOKEN_BYTES,
} from '../dsaMlaCacheLayout.ts';
import { dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_K_SLAB_BYTES, DSA_SPARSE_MLA_KEYS, DSA_SPARSE_MLA_SLABS, DSA_SPARSE_MLA_STAGES } from './dsaSparseMlaSmem.ts';
import { DSA_SPARSE_MLA_PRODUCER_THREADS } from './emitDsaSparseMlaProducer.ts';

const uint4 = opaque('uint4');

/** Lanes that gather one token together: lane l loads 16-byte e4m3 chunks l, l + 8, l + 16, l + 24 and RoPE chunk l. */
const LANES_PER_ROW = 8;
/** Tokens a producer thread gathers per tile (32 tokens over 128 threads / 8 lanes). */
const ROWS_PER_THREAD = (DSA_SPARSE_MLA_KEYS * LANES_PER_ROW) / DSA_SPARSE_MLA_PRODUCER_THREADS;
/** 16-byte e4m3 chunks of a token's 512 latent bytes, and those each lane loads. */
const FP8_CHUNKS = 32;
const CHUNKS_PER_LANE = FP8_CHUNKS / LANES_PER_ROW;

/** The paged FP8 cache the producer reads. */
export interface DsaSparseMlaFp8Cache {
  /** `const uint8*` of page 0 (16-byte aligned). */
  readonly cache: Expr;
  /** `int64` bytes between pages (a multiple of 16, ≥ 64 · 656). */
  readonly pageStride: Expr;
  /** `int` pages: slot s is valid when 0 ≤ s and s / 64 < numPages. */
  readonly numPages: Expr;
}

/** Byte offset of swizzled 16-byte chunk `j` (of a row's 72) of row `row` in a stage. */
function chunkAt(row: Expr, j: Expr): Expr {
  return add(add(mul(shr(j, 3), DSA_SPARSE_MLA_K_SLAB_BYTES), mul(row, 128)), shl(bitXor(bitAnd(j, 7), bitAnd(row, 7)), 4));
}

/** One token's loads: its validity, its four e4m3 chunks and its four scales (zeros when invalid); its RoPE chunk goes by cp.async. */
interface TokenLoads {
  readonly row: Expr;
  readonly data: readonly Expr[];
  readonly scales: readonly Expr[];
}

function emitTokenLoads(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  c: DsaSparseMlaFp8Cache,
  v: { it: Expr; row: Expr; lane: Expr; stage: Expr },
): TokenLoads {
  const { target, args } = cta;
  const entry = b.let('entry', int32, add(mul(v.it, DSA_SPARSE_MLA_KEYS), v.row));
  const slot = b.var('slot', int32, -1);
  b.if(lt(entry, cta.len), (x) => x.assign(slot, index(args.indices, cast(entry, int64))));
  const valid = b.let('slot_valid', bool, and(ge(slot, 0), lt(shr(slot, 6), c.numPages)));
  const validBytes = add(cta.smem, cta.layout.valid);
  b.if(eq(v.lane, 0), (x) => x.assign(index(validBytes, add(mul(v.stage, DSA_SPARSE_MLA_KEYS), v.row)), cast(valid, uint8)));
  const safe = b.let('safe_slot', int32, select(valid, slot, 0));
  const page = mul(cast(shr(safe, 6), int64), c.pageStride);
  const offset = cast(mul(bitAnd(safe, DSA_MLA_PAGE_TOKENS - 1), DSA_MLA_TOKEN_BYTES), int64);
  const src = b.let('token_src', pointer(uint8, { const: true }), add(add(c.cache, page), offset));
  const stagePtr = add(cta.smem, dsaSparseMlaStage(cta, v.stage));
  b.expr(
    cpAsync(target, {
      dst: add(stagePtr, chunkAt(v.row, add(v.lane, (DSA_SPARSE_MLA_SLABS - 1) * 8))),
      src: add(src, add(DSA_MLA_ROPE_OFFSET, mul(v.lane, 16))),
      bytes: 16,
      srcBytes: cast(select(valid, 16, 0), uint32),
    }),
  );
  const words = pointer(uint4, { const: true });
  const zero = call(
    'make_uint4',
    [0, 0, 0, 0].map((z) => cast(z, uint32)),
    uint4,
    { pure: true },
  );
  const data = Array.from({ length: CHUNKS_PER_LANE }, (_, k) => b.var(`fp8_${k}`, uint4, zero));
  const scaleWord = b.var('scale_word', uint4, zero);
  b.if(valid, (x) => {
    data.forEach((d, k) => x.assign(d, index(cast(src, words), add(v.lane, k * LANES_PER_ROW))));
    x.assign(scaleWord, index(cast(add(src, DSA_MLA_SCALE_OFFSET), words), 0));
  });
  const fields = ['x', 'y', 'z', 'w'];
  const scales = Array.from({ length: DSA_MLA_TILES }, (_, k) =>
    b.let(`scale${k}`, float32, call('__uint_as_float', [member(scaleWord, fields[k]!, uint32)], float32, { pure: true })),
  );
  return { row: v.row, data, scales };
}

/** Chunk k of the lane (latent bytes 16·(l + 8k) …, scale tile k) → bf16 output chunks 2(l + 8k) and 2(l + 8k) + 1 of the row. */
function emitDequantStore(b: BlockBuilder, cta: DsaSparseMlaCta, t: TokenLoads, v: { lane: Expr; stage: Expr }): void {
  const stagePtr = b.let('stage_bytes', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, v.stage)));
  const fields = ['x', 'y', 'z', 'w'];
  t.data.forEach((d, k) => {
    const bf = fields.flatMap((f) => {
      const w = member(d, f, uint32);
      return [
        dequantFp8x2ToBf16x2(cta.target, 'fp8e4m3fn', bitAnd(w, 0xffff), t.scales[k]!),
        dequantFp8x2ToBf16x2(cta.target, 'fp8e4m3fn', shr(w, 16), t.scales[k]!),
      ];
    });
    const j = b.let(`out_chunk${k}`, int32, mul(add(v.lane, k * LANES_PER_ROW), 2));
    for (const h of [0, 1]) {
      const dst = cast(add(stagePtr, chunkAt(t.row, add(j, h))), pointer(uint4));
      b.assign(index(dst, 0), call('make_uint4', bf.slice(4 * h, 4 * h + 4), uint4, { pure: true }));
    }
  });
}

/**
 * Emits the FP8 producer (threads [first, first + 128) of the block, `registers` after setmaxnreg): for
 * key tile it (stage it mod 4, round it / 4) it waits empty[stage]; the 8 lanes of token r (threads
 * 8r' … 8r' + 7 with r = r' and r' + 16) read index entry 32·it + r (valid when below the block's length,
 * ≥ 0 and on one of the cache's pages), one writes the validity byte, each copies its RoPE chunk with
 * cp.async (zero-filled when invalid) and loads its four e4m3 chunks and the token's four scales (zeros
 * when invalid), dequantizes them exactly (bf16(e4m3 · scale)) and stores them swizzled; then it waits
 * for its RoPE copies, fences its generic and async writes for wgmma, and arrives on full[stage] (128
 * arrivals: every lane's writes precede its own arrive).
 */
export function emitDsaSparseMlaFp8Producer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  cache: DsaSparseMlaFp8Cache,
  first: number,
  registers: number,
): void {
  const { target } = cta;
  b.comment(
    `FP8 producer warpgroup: registers down to ${registers}; ${LANES_PER_ROW} lanes per token, ${ROWS_PER_THREAD} tokens per thread`,
  );
  b.expr(setMaxNReg(target, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const lane = b.let('g_lane', int32, bitAnd(ptid, LANES_PER_ROW - 1));
  const group = b.let('g_group', int32, shr(ptid, 3));
  b.forRange({ name: 'it', to: cta.tiles }, (l, it) => {
    const stage = l.let('s', int32, bitAnd(it, DSA_SPARSE_MLA_STAGES - 1));
    l.expr(mbarrierWaitParity(target, cta.empty(stage), cast(bitXor(bitAnd(shr(it, 2), 1), 1), uint32)));
    const tokens = Array.from({ length: ROWS_PER_THREAD }, (_, g) => {
      const row = l.let(`g_row${g}`, int32, bitOr(group, (DSA_SPARSE_MLA_PRODUCER_THREADS / LANES_PER_ROW) * g));
      return emitTokenLoads(l, cta, cache, { it, row, lane, stage });
    });
    l.expr(cpAsyncCommitGroup(target));
    for (const t of tokens) emitDequantStore(l, cta, t, { lane, stage });
    l.expr(cpAsyncWaitGroup(target, 0));
    l.expr(fenceProxyAsyncShared(target));
    l.expr(mbarrierArrive(target, cta.full(stage)));
  });
}
