// The producer warpgroup of the chained sparse MLA decode: it fills the chained schedule's two 64-token key buffers
// half by half, in the consumers' order, from the paged FP8 MLA cache (656-byte rows: 512 e4m3, 4 fp32 tile scales,
// 64 bf16 RoPE). Each half's raw bytes land by cp.async inside that half itself (e4m3 chunk c where its own bf16 output
// chunk 2c goes, the token's scales in output chunk 2c + 1 of its first chunk), one step ahead of the half it then
// dequantizes in place into the 128B-swizzled bf16 layout the chained consumers read.
import {
  add,
  and,
  bitAnd,
  bitXor,
  bool,
  call,
  cast,
  cpAsync,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  dequantE4m3x2Pow2ToBf16x2,
  e4m3Pow2ScaleFactor,
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
import { DSA_MLA_PAGE_TOKENS, DSA_MLA_ROPE_OFFSET, DSA_MLA_SCALE_OFFSET, DSA_MLA_TOKEN_BYTES } from '../dsaMlaCacheLayout.ts';
import { dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_KEYS, DSA_SPARSE_MLA_CHAIN_SLAB_BYTES } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_SLABS } from './dsaSparseMlaSmem.ts';
import { dsaSparseMlaChainStage } from './emitDsaSparseMlaChainProducer.ts';

const uint4 = opaque('uint4');
const FIELDS = ['x', 'y', 'z', 'w'] as const;

/** Lanes that move one token together: lane l moves e4m3 chunks l + 8k (scale tile k) and RoPE chunk l. */
const LANES_PER_ROW = 8;
/** Tokens of a 64-token block each thread moves (64 tokens over 16 lane groups). */
const ROWS_PER_THREAD = (DSA_SPARSE_MLA_CHAIN_KEYS * LANES_PER_ROW) / 128;
/** e4m3 chunks a lane moves per half: k ∈ {2h, 2h + 1} (half h holds bf16 columns [256h, 256h + 256)). */
const CHUNKS_PER_HALF = 2;

/** The paged FP8 cache the producer reads. */
export interface DsaSparseMlaFp8Cache {
  /** `const uint8*` of page 0 (16-byte aligned). */
  readonly cache: Expr;
  /** `int64` bytes between pages (a multiple of 16, ≥ 64 · 656). */
  readonly pageStride: Expr;
  /** `int` pages: slot s is valid when 0 ≤ s and s / 64 < numPages. */
  readonly numPages: Expr;
}

/** The (buffer, half) steps of a pair in the consumers' order (as the bf16 chained producer); a buffer's first step writes its validity bytes. */
const STEPS: readonly { readonly buf: number; readonly half: number; readonly valid: boolean }[] = [
  { buf: 0, half: 0, valid: true },
  { buf: 1, half: 1, valid: true },
  { buf: 0, half: 1, valid: false },
  { buf: 1, half: 0, valid: false },
];

/** What every step shares. */
interface ChainFp8Scope {
  readonly cta: DsaSparseMlaCta;
  readonly cache: DsaSparseMlaFp8Cache;
  /** `int` lane in the token's 8 and in the warp. */
  readonly lane: Expr;
  readonly warpLane: Expr;
  /** `int` this thread's lane group g and its token rows of a block: g + 16k. */
  readonly group: Expr;
  readonly rows: readonly Expr[];
}

/** Byte offset (in a key buffer) of swizzled 16-byte chunk `j` (of a row's 72) of row `row`. */
function chunkAt(row: Expr, j: Expr | number): Expr {
  return add(add(mul(shr(j, 3), DSA_SPARSE_MLA_CHAIN_SLAB_BYTES), mul(row, 128)), shl(bitXor(bitAnd(j, 7), bitAnd(row, 7)), 4));
}

/** The e4m3 chunk (of 32) that lane `lane` moves as its k-th: l + 8k, scale tile k. */
function e4m3Chunk(lane: Expr, k: number): Expr {
  return add(lane, k * LANES_PER_ROW);
}

/** This thread's cache slots of block `blk` of pair `pair`: index entry 64 · (2 · pair + blk) + row, or −1 past len. */
function cacheSlots(b: BlockBuilder, f: ChainFp8Scope, pair: Expr, blk: number): Expr[] {
  return f.rows.map((row, g) => {
    const entry = b.let('entry', int32, add(mul(add(mul(pair, 2), blk), DSA_SPARSE_MLA_CHAIN_KEYS), row));
    const slot = b.var(`slot${blk}_${g}`, int32, -1);
    b.if(lt(entry, f.cta.len), (x) => x.assign(slot, index(f.cta.args.indices, cast(entry, int64))));
    return slot;
  });
}

/** A slot's validity (≥ 0, on a page below numPages) and its token's bytes (those of slot 0 when invalid). */
function cacheRow(b: BlockBuilder, f: ChainFp8Scope, slot: Expr): { readonly src: Expr; readonly valid: Expr } {
  const valid = b.let('slot_valid', bool, and(ge(slot, 0), lt(shr(slot, 6), f.cache.numPages)));
  const safe = b.let('safe_slot', int32, select(valid, slot, 0));
  const page = mul(cast(shr(safe, 6), int64), f.cache.pageStride);
  const offset = cast(mul(bitAnd(safe, DSA_MLA_PAGE_TOKENS - 1), DSA_MLA_TOKEN_BYTES), int64);
  return { valid, src: b.let('token_src', pointer(uint8, { const: true }), add(add(f.cache.cache, page), offset)) };
}

/**
 * Waits for the step's half to be empty (`parity`: the pair's, inverted), writes the buffer's validity bytes on its
 * first step (lane 0), and issues this thread's copies of the half: e4m3 chunks l + 8k for k ∈ {2h, 2h + 1} into
 * output chunk 2 (l + 8k), the token's 16 scale bytes (lane 0) into output chunk 32h + 1, and for half 1 RoPE chunk l
 * into slab 8 — each zero-filled for an invalid slot. Committed as one group.
 */
function emitIssue(b: BlockBuilder, f: ChainFp8Scope, step: (typeof STEPS)[number], slots: readonly Expr[], parity: Expr): void {
  const { cta } = f;
  const t = cta.target;
  b.expr(mbarrierWaitParity(t, cta.empty(dsaSparseMlaChainStage(step.buf, step.half)), parity));
  const base = b.let('issue_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, step.buf)));
  f.rows.forEach((row, g) => {
    const r = cacheRow(b, f, slots[g]!);
    if (step.valid)
      b.if(eq(f.lane, 0), (x) =>
        x.assign(index(add(cta.smem, cta.layout.valid), add(step.buf * DSA_SPARSE_MLA_CHAIN_KEYS, row)), cast(r.valid, uint8)),
      );
    const bytes = b.let('src_bytes', uint32, cast(select(r.valid, 16, 0), uint32));
    const copy = (dst: Expr, from: Expr | number): Expr =>
      cpAsync(t, { dst: add(base, dst), src: add(r.src, from), bytes: 16, srcBytes: bytes });
    for (let k = CHUNKS_PER_HALF * step.half; k < CHUNKS_PER_HALF * (step.half + 1); k++) {
      const c = e4m3Chunk(f.lane, k);
      b.expr(copy(chunkAt(row, mul(c, 2)), mul(c, 16)));
    }
    b.if(eq(f.lane, 0), (x) => x.expr(copy(chunkAt(row, 32 * step.half + 1), DSA_MLA_SCALE_OFFSET)));
    if (step.half === 1) b.expr(copy(chunkAt(row, add(f.lane, (DSA_SPARSE_MLA_SLABS - 1) * 8)), add(DSA_MLA_ROPE_OFFSET, mul(f.lane, 16))));
  });
  b.expr(cpAsyncCommitGroup(t));
}

/**
 * The step's half, its copies landed for this thread: per token, the thread reads back its raw chunks, the token's lane
 * 0 reads the scales and passes tile k's to the other 7 lanes by shuffle, then chunk c = l + 8k becomes bf16 output
 * chunks 2c and 2c + 1 (exact: bf16(e4m3 · scale), the scales being powers of two). Every byte a thread overwrites is
 * its own raw chunk or (lane 0) the scales it has read, so no thread writes what another still has to read. Then the
 * writes are fenced for wgmma and the thread arrives on the half's full barrier (128 arrivals).
 */
function emitDequant(b: BlockBuilder, f: ChainFp8Scope, step: (typeof STEPS)[number]): void {
  const { cta } = f;
  const t = cta.target;
  const base = b.let('cvt_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, step.buf)));
  const at = (offset: Expr): Expr => index(cast(add(base, offset), pointer(uint4)), 0);
  const ks = [0, 1].map((i) => CHUNKS_PER_HALF * step.half + i);
  b.forRange({ name: 'cvt_row', to: ROWS_PER_THREAD, unroll: 1 }, (l, g) => {
    const row = l.let('row', int32, add(f.group, mul(g, 128 / LANES_PER_ROW)));
    const raw = ks.map((k) => l.let(`raw${k}`, uint4, at(chunkAt(row, mul(e4m3Chunk(f.lane, k), 2)))));
    const zero = [0, 0, 0, 0].map((z) => cast(z, uint32));
    const word = l.var('scale_word', uint4, call('make_uint4', zero, uint4, { pure: true }));
    l.if(eq(f.lane, 0), (x) => x.assign(word, at(chunkAt(row, 32 * step.half + 1))));
    raw.forEach((d, i) => {
      const k = ks[i]!;
      const bits = t.shfl(member(word, FIELDS[k]!, uint32), bitAnd(f.warpLane, ~(LANES_PER_ROW - 1)));
      const scale = call('__uint_as_float', [bits], float32, { pure: true });
      const factor = l.let(`tile_factor${k}`, uint32, e4m3Pow2ScaleFactor(scale));
      const words = FIELDS.flatMap((field) => {
        const w = member(d, field, uint32);
        return [dequantE4m3x2Pow2ToBf16x2(t, w, 'low', factor), dequantE4m3x2Pow2ToBf16x2(t, w, 'high', factor)];
      });
      const j = mul(e4m3Chunk(f.lane, k), 2);
      for (const h of [0, 1])
        l.assign(at(chunkAt(row, add(j, h))), call('make_uint4', words.slice(4 * h, 4 * h + 4), uint4, { pure: true }));
    });
  });
  b.expr(fenceProxyAsyncShared(t));
  b.expr(mbarrierArrive(t, cta.full(dsaSparseMlaChainStage(step.buf, step.half))));
}

/**
 * Emits the chained FP8 producer (threads [first, first + 128) of the block, `registers` after setmaxnreg). Thread
 * group g = (tid − first) / 8 moves tokens g + 16k (k < 4) of both blocks of each pair. Steps run in the consumers'
 * order (buffer 0's left half, buffer 1's right, buffer 0's right, buffer 1's left), each issued before the previous
 * one is dequantized and signalled — never a step further: the empty barrier a step waits for is released without the
 * step before it (the leader's own P·V frees buffer 0's left half before it needs buffer 1's; see the consumers).
 */
export function emitDsaSparseMlaChainFp8Producer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  cache: DsaSparseMlaFp8Cache,
  first: number,
  registers: number,
): void {
  const t = cta.target;
  b.comment(`chained FP8 producer warpgroup: registers down to ${registers}; ${LANES_PER_ROW} lanes per token, one half ahead`);
  b.expr(setMaxNReg(t, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const group = b.let('g_group', int32, shr(ptid, 3));
  const rows = Array.from({ length: ROWS_PER_THREAD }, (_, g) => b.let(`g_row${g}`, int32, add(group, (128 / LANES_PER_ROW) * g)));
  const f: ChainFp8Scope = {
    cta,
    cache,
    lane: b.let('g_lane', int32, bitAnd(ptid, LANES_PER_ROW - 1)),
    warpLane: b.let('warp_lane', int32, bitAnd(ptid, 31)),
    group,
    rows,
  };
  const pairs = b.let('pairs', int32, shr(add(cta.tiles, 1), 1));
  b.forRange({ name: 'pair', to: pairs }, (l, pair) => {
    const blocks = [cacheSlots(l, f, pair, 0), cacheSlots(l, f, pair, 1)];
    const parity = l.let('free_parity', uint32, cast(bitXor(bitAnd(pair, 1), 1), uint32));
    STEPS.forEach((step, i) => {
      emitIssue(l, f, step, blocks[step.buf]!, parity);
      l.expr(cpAsyncWaitGroup(t, 1));
      if (i > 0) emitDequant(l, f, STEPS[i - 1]!);
      else l.if(ge(pair, 1), (x) => emitDequant(x, f, STEPS[STEPS.length - 1]!));
    });
  });
  b.if(ge(pairs, 1), (x) => {
    x.expr(cpAsyncWaitGroup(t, 0));
    emitDequant(x, f, STEPS[STEPS.length - 1]!);
  });
}
