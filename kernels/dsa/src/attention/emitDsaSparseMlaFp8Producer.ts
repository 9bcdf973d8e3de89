// The producer warpgroup of the sparse MLA decode: gathers the selected tokens of the paged FP8 MLA cache (656-byte
// rows: 512 e4m3, 4 fp32 tile scales, 64 bf16 RoPE) with cp.async one tile ahead, raw, into the key stage itself (each
// lane's e4m3 chunks where its own bf16 outputs of the upper latent slabs go, the scales in their own region, the RoPE
// straight into its slab), then dequantizes each tile in place into the prefill's 128B-swizzled bf16 layout, so the
// consumers are the prefill's.
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
  dequantE4m3x2Pow2ToBf16x2,
  div,
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
  ne,
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
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_SPARSE_MLA_PRODUCER_THREADS, dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_K_SLAB_BYTES, DSA_SPARSE_MLA_KEYS, DSA_SPARSE_MLA_SLABS, DSA_SPARSE_MLA_STAGES } from './dsaSparseMlaSmem.ts';

const uint4 = opaque('uint4');
const FIELDS = ['x', 'y', 'z', 'w'] as const;

/** Lanes that gather one token together: lane l moves e4m3 chunks l, l + 8, l + 16, l + 24 and RoPE chunk l. */
const LANES_PER_ROW = 8;
/** Tokens a producer thread gathers per tile (32 tokens over 128 threads / 8 lanes). */
const ROWS_PER_THREAD = (DSA_SPARSE_MLA_KEYS * LANES_PER_ROW) / DSA_SPARSE_MLA_PRODUCER_THREADS;
/** 16-byte e4m3 chunks of a token's 512 latent bytes, and those each lane moves. */
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

/** What every step of the producer shares. */
interface Fp8Scope {
  readonly cta: DsaSparseMlaCta;
  readonly cache: DsaSparseMlaFp8Cache;
  readonly lane: Expr;
  /** `int` lane in the warp (the token's lane 0 is lane & ~7). */
  readonly warpLane: Expr;
  readonly rows: readonly Expr[];
  /** laneFlip of the lane, as an `int` and as a `bool`. */
  readonly flip: Expr;
  readonly flipped: Expr;
  /** Byte offset of the scales region (fp8Scales of the layout). */
  readonly scales: number;
}

/** Byte offset of swizzled 16-byte chunk `j` (of a row's 72) of row `row` in a stage. */
function chunkAt(row: Expr, j: Expr): Expr {
  return add(add(mul(shr(j, 3), DSA_SPARSE_MLA_K_SLAB_BYTES), mul(row, 128)), shl(bitXor(bitAnd(j, 7), bitAnd(row, 7)), 4));
}

/**
 * The output chunk (of the row's 72) where lane `lane` stages its raw e4m3 chunk k: its own bf16 outputs in latent
 * slabs 4 … 7, 2(l + 16) + (k XOR flip) for k < 2 and 2(l + 24) + (k − 2 XOR flip) (so its in-place writes only ever
 * cover its own raw bytes; `flip` spreads a token's 8 lanes over all 8 chunk positions of a swizzled row).
 */
function rawChunk(lane: Expr, flip: Expr, k: number): Expr {
  return add(mul(add(lane, k < 2 ? 16 : 24), 2), bitXor(k % 2, flip));
}

/**
 * `int` 0 or 1: which of its two output chunks 2c, 2c + 1 lane `lane` writes first, (l XOR l / 4) mod 2 — so that one
 * 16-byte store instruction of a token's 8 lanes covers all 8 positions of its 128-byte rows (both slabs) and no bank
 * twice, where 2c alone would hit the even positions of two slabs (a 2-way conflict per token, worse across the warp).
 */
function laneFlip(lane: Expr): Expr {
  return bitAnd(bitXor(lane, shr(lane, 2)), 1);
}

/** Index entry 32·tile + row of the block's entries, or −1 past its length. */
function emitSlots(b: BlockBuilder, f: Fp8Scope, tile: Expr, names: string): Expr[] {
  return f.rows.map((row, g) => {
    const entry = add(mul(tile, DSA_SPARSE_MLA_KEYS), row);
    return b.var(`${names}${g}`, int32, select(lt(entry, f.cta.len), index(f.cta.args.indices, cast(entry, int64)), -1));
  });
}

/**
 * Waits for tile `tile`'s stage to be empty, then per token of the thread: the validity byte (lane 0), and cp.async
 * of its e4m3 chunks into the stage's raw region, of its scales (lane 0) and of its RoPE chunk into slab 8 (every copy
 * zero-filled when the slot is invalid: −1, negative, or on a page ≥ numPages).
 */
function emitIssue(b: BlockBuilder, f: Fp8Scope, tile: Expr, slots: readonly Expr[]): void {
  const { cta } = f;
  const t = cta.target;
  const stage = b.let('issue_stage', int32, bitAnd(tile, DSA_SPARSE_MLA_STAGES - 1));
  b.expr(mbarrierWaitParity(t, cta.empty(stage), cast(bitXor(bitAnd(shr(tile, 2), 1), 1), uint32)));
  const base = b.let('issue_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, stage)));
  f.rows.forEach((row, g) => {
    const slot = slots[g]!;
    const valid = b.let('slot_valid', bool, and(ge(slot, 0), lt(shr(slot, 6), f.cache.numPages)));
    b.if(eq(f.lane, 0), (x) =>
      x.assign(index(add(cta.smem, cta.layout.valid), add(mul(stage, DSA_SPARSE_MLA_KEYS), row)), cast(valid, uint8)),
    );
    const safe = b.let('safe_slot', int32, select(valid, slot, 0));
    const offset = cast(mul(bitAnd(safe, DSA_MLA_PAGE_TOKENS - 1), DSA_MLA_TOKEN_BYTES), int64);
    const src = b.let(
      'token_src',
      pointer(uint8, { const: true }),
      add(add(f.cache.cache, mul(cast(shr(safe, 6), int64), f.cache.pageStride)), offset),
    );
    const bytes = b.let('src_bytes', uint32, cast(select(valid, 16, 0), uint32));
    const copy = (dst: Expr, from: Expr): Expr => cpAsync(t, { dst, src: from, bytes: 16, srcBytes: bytes });
    for (let k = 0; k < CHUNKS_PER_LANE; k++) {
      const c = add(f.lane, k * LANES_PER_ROW);
      b.expr(copy(add(base, chunkAt(row, rawChunk(f.lane, f.flip, k))), add(src, mul(c, 16))));
    }
    const scaleDst = add(cta.smem, add(f.scales, mul(add(mul(stage, DSA_SPARSE_MLA_KEYS), row), 16)));
    b.if(eq(f.lane, 0), (x) => x.expr(copy(scaleDst, add(src, DSA_MLA_SCALE_OFFSET))));
    b.expr(copy(add(base, chunkAt(row, add(f.lane, (DSA_SPARSE_MLA_SLABS - 1) * 8))), add(src, add(DSA_MLA_ROPE_OFFSET, mul(f.lane, 16)))));
  });
}

/**
 * Tile `tile` (its copies landed for this thread), token by token: the thread reads back the raw chunks it copied, the
 * token's lane 0 reads the scales it copied and passes them to the other 7 lanes by shuffles, then chunk k (latent
 * bytes 16·(l + 8k) …, scale tile k) becomes bf16 output chunks 2(l + 8k) and 2(l + 8k) + 1 of its row — for k ≥ 2
 * exactly where its raw chunks were, so no thread overwrites bytes another still has to read.
 */
function emitDequant(b: BlockBuilder, f: Fp8Scope, tile: Expr): void {
  const { cta } = f;
  const t = cta.target;
  const stage = b.let('cvt_stage', int32, bitAnd(tile, DSA_SPARSE_MLA_STAGES - 1));
  const base = b.let('cvt_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, stage)));
  const at = (offset: Expr): Expr => index(cast(offset, pointer(uint4)), 0);
  f.rows.forEach((row, g) => {
    const raw = Array.from({ length: CHUNKS_PER_LANE }, (_, k) =>
      b.let(`raw${g}_${k}`, uint4, at(add(base, chunkAt(row, rawChunk(f.lane, f.flip, k))))),
    );
    const word = b.var(
      `scale_word${g}`,
      uint4,
      call(
        'make_uint4',
        [0, 0, 0, 0].map((z) => cast(z, uint32)),
        uint4,
        { pure: true },
      ),
    );
    const scaleAt = at(add(cta.smem, add(f.scales, mul(add(mul(stage, DSA_SPARSE_MLA_KEYS), row), 16))));
    b.if(eq(f.lane, 0), (x) => x.assign(word, scaleAt));
    raw.forEach((d, k) => {
      const bits = t.shfl(member(word, FIELDS[k]!, uint32), bitAnd(f.warpLane, ~(LANES_PER_ROW - 1)));
      const s = b.let(`tile_scale${g}_${k}`, float32, call('__uint_as_float', [bits], float32, { pure: true }));
      const factor = b.let(`tile_factor${g}_${k}`, uint32, e4m3Pow2ScaleFactor(s));
      // The half this lane stores first (output chunk j + flip) leads: a flipped lane swaps its raw word pairs (4 selects)
      // instead of choosing each of 8 output words.
      const fields = FIELDS.map((field) => member(d, field, uint32));
      const lead = fields.map((w, i) => b.let('raw_word', uint32, select(f.flipped, fields[i ^ 2]!, w)));
      const words = lead
        .flatMap((w) => [dequantE4m3x2Pow2ToBf16x2(t, w, 'low', factor), dequantE4m3x2Pow2ToBf16x2(t, w, 'high', factor)])
        .map((w) => b.let('bf16x2', uint32, w));
      const j = mul(add(f.lane, k * LANES_PER_ROW), 2);
      for (const [h, chunk] of [add(j, f.flip), add(j, bitXor(f.flip, 1))].entries()) {
        const half = [0, 1, 2, 3].map((w) => words[4 * h + w]!);
        b.assign(at(add(base, chunkAt(row, chunk))), call('make_uint4', half, uint4, { pure: true }));
      }
    });
  });
}

/**
 * Emits the FP8 producer (threads [first, first + 128) of the block, `registers` after setmaxnreg). The 8 lanes of
 * token r (threads 8r' … 8r' + 7 with r = r' and r' + 16) move its row. Pipelined by pairs of tiles, the consumers'
 * unit, one pair ahead: iteration q reads the slots of pair q + 1, waits for its own copies of pair q (issued an
 * iteration earlier), dequantizes its own chunks of both tiles in place (exact: bf16(e4m3 · scale), by bit placement
 * and bf16x2 multiplies, off the conversion pipe: the cache's scales are powers of two), fences its generic and async
 * writes for wgmma and arrives on each tile's full barrier (128 arrivals: every lane's copies and stores precede its own
 * arrive) — and only then waits for pair q + 1's stages to be empty (the consumers finishing pair q − 1) and issues its
 * copies, so a pair the consumers need next is never held behind that wait. One commit group per pair.
 */
export function emitDsaSparseMlaFp8Producer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  cache: DsaSparseMlaFp8Cache,
  first: number,
  registers: number,
): void {
  const t = cta.target;
  if (cta.layout.fp8Scales === undefined)
    throw new DsaArgumentError('cta.layout', 'must have the fp8Scales region (dsaSparseMlaSmem({ fp8Scales: true }))', cta.layout);
  b.comment(
    `FP8 producer warpgroup: registers down to ${registers}; ${LANES_PER_ROW} lanes per token, ${ROWS_PER_THREAD} tokens per thread, one pair of tiles ahead`,
  );
  b.expr(setMaxNReg(t, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const lane = b.let('g_lane', int32, bitAnd(ptid, LANES_PER_ROW - 1));
  const group = b.let('g_group', int32, shr(ptid, 3));
  const rows = Array.from({ length: ROWS_PER_THREAD }, (_, g) =>
    b.let(`g_row${g}`, int32, bitOr(group, (DSA_SPARSE_MLA_PRODUCER_THREADS / LANES_PER_ROW) * g)),
  );
  const flip = b.let('lane_flip', int32, laneFlip(lane));
  const f: Fp8Scope = {
    cta,
    cache,
    lane,
    warpLane: b.let('warp_lane', int32, bitAnd(ptid, 31)),
    rows,
    flip,
    flipped: b.let('lane_flipped', bool, ne(flip, 0)),
    scales: cta.layout.fp8Scales,
  };
  const pairs = b.let('p_pairs', int32, div(add(cta.tiles, 1), 2));
  /** Issues the copies of pair q's tiles that exist (their slots read beforehand). */
  const issuePair = (x: BlockBuilder, q: Expr, slots: readonly (readonly Expr[])[]): void =>
    slots.forEach((tileSlots, j) => {
      const tile = x.let(`issue_tile${j}`, int32, add(mul(q, 2), j));
      x.if(lt(tile, cta.tiles), (y) => emitIssue(y, f, tile, tileSlots));
    });
  b.if(ge(pairs, 1), (x) =>
    issuePair(
      x,
      cast(0, int32),
      [0, 1].map((j) => emitSlots(x, f, cast(j, int32), `first_slot${j}_`)),
    ),
  );
  b.expr(cpAsyncCommitGroup(t));
  b.forRange({ name: 'pq', to: pairs }, (l, q) => {
    const next = [0, 1].map((j) => emitSlots(l, f, add(mul(q, 2), 2 + j), `next_slot${j}_`));
    l.expr(cpAsyncWaitGroup(t, 0));
    for (const j of [0, 1]) {
      const tile = l.let(`cvt_tile${j}`, int32, add(mul(q, 2), j));
      l.if(lt(tile, cta.tiles), (x) => {
        emitDequant(x, f, tile);
        x.expr(fenceProxyAsyncShared(t));
        x.expr(mbarrierArrive(t, cta.full(bitAnd(tile, DSA_SPARSE_MLA_STAGES - 1))));
      });
    }
    l.if(lt(add(q, 1), pairs), (x) => issuePair(x, add(q, 1), next));
    l.expr(cpAsyncCommitGroup(t));
  });
}
