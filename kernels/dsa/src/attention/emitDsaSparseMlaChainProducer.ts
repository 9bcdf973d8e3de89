// The producer warpgroup of the chained sparse MLA schedule: per pair of 64-token key blocks it gathers each buffer's
// halves in the order the consumers need them (buffer 0's left, buffer 1's right, buffer 0's right, buffer 1's left),
// each as soon as its readers released it, and signals each half when its copies land without waiting for them.
import {
  add,
  and,
  bitAnd,
  bitXor,
  bool,
  cast,
  cpAsyncMbarrierArrive,
  eq,
  ge,
  index,
  int32,
  int64,
  lit,
  lt,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  opaqueValue,
  pointer,
  select,
  setMaxNReg,
  shr,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_HALVES, DSA_SPARSE_MLA_CHAIN_KEYS, DSA_SPARSE_MLA_CHAIN_SLAB_BYTES } from './dsaSparseMlaChainSmem.ts';
import { dsaBf16RowBytes, emitDsaSwizzledRowCopy } from './emitDsaSwizzledRowCopy.ts';

/** The bf16 latent rows the producer gathers. */
export interface DsaSparseMlaBf16Source {
  /** `const bf16*` latent rows [sKv][kvStride]. */
  readonly kv: Expr;
  /** `int` elements between latent rows. */
  readonly kvStride: Expr;
  /** `int` latent rows (valid indices are in [0, sKv)). */
  readonly sKv: Expr;
}

/** Lanes that copy one token's row together (lane l: chunk l of every slab, one 128-byte line per 8 lanes). */
const LANES_PER_ROW = 8;
/** Token rows of a block each thread copies (64 tokens over 16 lane groups). */
const ROWS_PER_THREAD = (DSA_SPARSE_MLA_CHAIN_KEYS * LANES_PER_ROW) / 128;

/** The (buffer, half) steps of a pair in fill order; the first step of each buffer also writes its validity bytes. */
const STEPS: readonly { readonly buf: number; readonly half: number; readonly valid: boolean }[] = [
  { buf: 0, half: 0, valid: true },
  { buf: 1, half: 1, valid: true },
  { buf: 0, half: 1, valid: false },
  { buf: 1, half: 0, valid: false },
];

/** The ring stage of a buffer's half: 2 · buffer + half (full and empty barriers alike). */
export function dsaSparseMlaChainStage(buf: number, half: number): Expr {
  return lit(2 * buf + half, int32);
}

/** One gathered token of a block: its source row and whether its index is valid. */
interface GatherRow {
  readonly row: Expr;
  readonly source: Expr;
  readonly valid: Expr;
}

/** This thread's rows of block `blk` (0 or 1) of the pair: index entry 64 · (2p + blk) + row, valid in [0, s_kv) and below len. */
function gatherRows(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  source: DsaSparseMlaBf16Source,
  group: Expr,
  pair: Expr,
  blk: number,
): GatherRow[] {
  return Array.from({ length: ROWS_PER_THREAD }, (_, g) => {
    const row = b.let(`g_row${blk}_${g}`, int32, add(group, (128 / LANES_PER_ROW) * g));
    const entry = b.let('entry', int32, add(mul(add(mul(pair, 2), blk), DSA_SPARSE_MLA_CHAIN_KEYS), row));
    const idx = b.var('kv_index', int32, -1);
    b.if(lt(entry, cta.len), (x) => x.assign(idx, index(cta.args.indices, cast(entry, int64))));
    const valid = b.let(`kv_valid${blk}_${g}`, bool, and(ge(idx, 0), lt(idx, source.sKv)));
    return { row, valid, source: dsaBf16RowBytes(b, `kv_row${blk}_${g}`, source.kv, select(valid, idx, 0), source.kvStride) };
  });
}

/**
 * Emits the producer (threads [first, first + 128), `registers` after setmaxnreg). Thread group g = (tid − first) / 8
 * gathers tokens g + 16k (k < 4) of both blocks of pair p: lane c copies 16-byte chunk c of each slab of the step's
 * half (zero-filled where the index is invalid). Per step it waits the half's empty barrier (phase p), writes the
 * buffer's validity bytes on the buffer's first step (lane 0 of each group), arrives once (ordering those bytes), and
 * once more through cp.async.mbarrier.arrive.noinc when its copies land: full barriers count 256 arrivals.
 */
export function emitDsaSparseMlaChainProducer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  source: DsaSparseMlaBf16Source,
  first: number,
  registers: number,
): void {
  const { target } = cta;
  b.comment(`producer warpgroup: registers down to ${registers}; ${LANES_PER_ROW} lanes per token, ${ROWS_PER_THREAD} tokens per block`);
  b.expr(setMaxNReg(target, 'dec', registers));
  const ptid = b.let('p_tid', int32, sub(cta.tid, first));
  const lane = b.let('g_lane', int32, bitAnd(ptid, LANES_PER_ROW - 1));
  const group = b.let('g_group', int32, shr(ptid, 3));
  const validBytes = b.let('valid_bytes', pointer(uint8), add(cta.smem, cta.layout.valid));
  const pairs = b.let('pairs', int32, shr(add(cta.tiles, 1), 1));
  b.forRange({ name: 'pair', to: pairs }, (l, pair) => {
    const rows = [gatherRows(l, cta, source, group, pair, 0), gatherRows(l, cta, source, group, pair, 1)];
    const parity = l.let('free_parity', uint32, cast(bitXor(bitAnd(pair, 1), 1), uint32));
    for (const step of STEPS) {
      const stage = dsaSparseMlaChainStage(step.buf, step.half);
      const [s0, s1] = DSA_SPARSE_MLA_CHAIN_HALVES[step.half]!;
      l.expr(mbarrierWaitParity(target, cta.empty(stage), parity));
      const slabs = opaqueValue(l, 'buf_ptr', pointer(uint8), add(cta.smem, dsaSparseMlaStage(cta, step.buf)));
      for (const r of rows[step.buf]!) {
        if (step.valid)
          l.if(eq(lane, 0), (x) => x.assign(index(validBytes, add(step.buf * DSA_SPARSE_MLA_CHAIN_KEYS, r.row)), cast(r.valid, uint8)));
        emitDsaSwizzledRowCopy(l, target, {
          slabs,
          slabBytes: DSA_SPARSE_MLA_CHAIN_SLAB_BYTES,
          row: r.row,
          source: r.source,
          first: add(lane, 8 * s0),
          count: s1 - s0,
          stride: LANES_PER_ROW,
          srcBytes: cast(select(r.valid, 16, 0), uint32),
        });
      }
      l.expr(mbarrierArrive(target, cta.full(stage)));
      l.expr(cpAsyncMbarrierArrive(target, cta.full(stage)));
    }
  });
}
