// The FP8 MLA latent cache writer: bf16 latent KV rows [tokens][576] → 656-byte rows of the paged cache (FlashMLA's V32_FP8Sparse).
import {
  add,
  and,
  bitAnd,
  bitOr,
  call,
  cast,
  div,
  eq,
  f32,
  float32,
  ge,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lt,
  member,
  mul,
  opaque,
  packFp8x2,
  pointer,
  shl,
  shr,
  sm90a,
  type BlockBuilder,
  type CType,
  type Expr,
  type SourceBuilder,
  type Target,
  uint16,
  uint32,
  uint8,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  DSA_MLA_LATENT_DIM,
  DSA_MLA_NOPE_DIM,
  DSA_MLA_PAGE_BYTES,
  DSA_MLA_PAGE_TOKENS,
  DSA_MLA_ROPE_OFFSET,
  DSA_MLA_SCALE_FLOOR,
  DSA_MLA_SCALE_OFFSET,
  DSA_MLA_TOKEN_BYTES,
} from '../dsaMlaCacheLayout.ts';
import { DSA_E4M3_MAX } from '../dsaShape.ts';

/** The Policy of one MLA cache-writer instance: warps per CTA (one token per warp). */
export interface DsaMlaCacheWriterPolicy {
  readonly warps: number;
}

const uint4 = opaque('uint4');
/** bf16 values one lane quantizes: 16 (two 16-byte loads), so 8 lanes make a 128-value scale tile. */
const LANE_VALUES = 16;

function writerParams() {
  return {
    latent: kernelParam.pointer(uint16, { const: true, align: 16 }),
    latent_stride: kernelParam.i32({ range: [DSA_MLA_LATENT_DIM, 2 ** 30] }),
    slots: kernelParam.pointer(int32, { const: true, align: 4 }),
    cache: kernelParam.pointer(uint8, { align: 16 }),
    page_stride: kernelParam.i32({ range: [DSA_MLA_PAGE_BYTES, 2 ** 30] }),
    num_pages: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
    tokens: kernelParam.i32({ range: [0, 2 ** 31 - 1] }),
  };
}

type WriterParams = ReturnType<typeof writerParams>;
type WriterArgs = { readonly [K in keyof WriterParams]: Expr };

const fn = (name: string, args: readonly Expr[], type: CType = float32): Expr => call(name, args, type, { pure: true });

/**
 * One MLA cache-writer instance (sm_90a). Token t is a warp: it reads its row at `latent + t · latent_stride` (bf16
 * elements, 16-byte aligned), skips when `slots[t] < 0` or its page is ≥ `num_pages`, else writes the 656-byte row at
 * `cache + (slot >> 6) · page_stride + (slot & 63) · 656`. Lane ℓ holds nope values 16ℓ … 16ℓ+15 (two 16-byte loads),
 * so lanes 8j … 8j+7 make tile j: amax by three xor shuffles, r = fmaxf(__fdiv_rn(amax, 448), 1e-4f), s = the smallest
 * power of two ≥ r (on the bits), e4m3 = cvt.rn.satfinite(x · (1/s)) (exact: 1/s is a power of two, so the product is
 * the correctly rounded x / s) stored as one 16-byte word per lane; lane 0 stores the 4 scales (16 B), lanes 0–7 copy
 * the 64 RoPE bf16 (16 B each). `dsaQuantizeMlaLatent` + `dsaWriteMlaCacheReference` are its CPU twin.
 */
export class DsaMlaCacheWriterInstance extends KernelInstance<DsaMlaCacheWriterPolicy, WriterParams> {
  protected readonly sourceHeader = { title: 'DSA FP8 MLA latent cache writer', generator: '@tilekit/kernel-dsa' };

  constructor(policy: DsaMlaCacheWriterPolicy, target: Target = sm90a) {
    const warps = policy.warps;
    if (!Number.isInteger(warps) || warps < 1 || warps > 32)
      throw new DsaArgumentError('policy.warps', 'must be an integer in [1, 32]', warps);
    const key = instanceKey('dsa_mla_cache_writer', { warps, target: target.name }, { tags: { warps: 'w' } });
    super({ key, policy: Object.freeze({ warps }), target, params: writerParams(), threads: 32 * warps });
  }

  /** The launch for `tokens` rows: one warp per token. */
  launch(tokens: number): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, Math.ceil(tokens / this.policy.warps)), 1, 1], block: [this.threads, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
      const lane = b.let('lane', int32, bitAnd(tid, 31));
      const token = b.let('token', int32, add(mul(cast(t.blockIdx('x'), int32), this.policy.warps), div(tid, 32)));
      b.if(lt(token, a.tokens), (x) => {
        const slot = x.let('slot', int32, index(a.slots, token));
        x.comment('warp-uniform: a negative slot or a page past the cache writes nothing');
        x.if(and(ge(slot, 0), lt(shr(slot, 6), a.num_pages)), (y) => this.emitToken(y, a, token, lane, slot));
      });
    });
  }

  /** One warp quantizes token `token` and stores its row at cache slot `slot`. */
  private emitToken(b: BlockBuilder, a: WriterArgs, token: Expr, lane: Expr, slot: Expr): void {
    const src = b.let(
      'src',
      pointer(uint4, { const: true }),
      cast(add(a.latent, mul(cast(token, int64), cast(a.latent_stride, int64))), pointer(uint4, { const: true })),
    );
    const page = mul(cast(shr(slot, 6), int64), cast(a.page_stride, int64));
    const row = b.let(
      'dst',
      pointer(uint8),
      add(add(a.cache, page), cast(mul(bitAnd(slot, DSA_MLA_PAGE_TOKENS - 1), DSA_MLA_TOKEN_BYTES), int64)),
    );
    const x = this.emitLoadNope(b, src, lane);
    const s = this.emitTileScale(b, x);
    this.emitStoreNope(b, row, lane, x, s);
    this.emitStoreScales(b, row, lane, s);
    b.comment(`lanes 0-7: the 64 RoPE bf16, 16 bytes each, unchanged (input element ${DSA_MLA_NOPE_DIM} on)`);
    b.if(lt(lane, 8), (y) => {
      const rope = index(src, add(DSA_MLA_NOPE_DIM / 8, lane));
      y.assign(index(cast(add(row, add(DSA_MLA_ROPE_OFFSET, mul(lane, 16))), pointer(uint4)), 0), rope);
    });
  }

  /** The lane's 16 nope values as fp32: two 16-byte loads of 8 bf16, each 32-bit word split into its low and high bf16. */
  private emitLoadNope(b: BlockBuilder, src: Expr, lane: Expr): Expr[] {
    b.comment(`${LANE_VALUES} bf16 per lane (two 16-byte loads) → fp32; lanes 8j … 8j+7 hold scale tile j`);
    const v = [0, 1].map((i) => b.let(`v${i}`, uint4, index(src, add(mul(lane, 2), i))));
    const words = v.flatMap((w) => ['x', 'y', 'z', 'w'].map((f) => member(w, f, uint32)));
    return words.flatMap((w, j) => [
      b.let(`x${2 * j}`, float32, fn('__uint_as_float', [shl(w, 16)])),
      b.let(`x${2 * j + 1}`, float32, fn('__uint_as_float', [bitAnd(w, 0xffff_0000)])),
    ]);
  }

  /** The tile's scale: amax over 8 lanes, r = max(amax / 448, 1e-4) in fp32, rounded up to a power of two on its bits. */
  private emitTileScale(b: BlockBuilder, x: readonly Expr[]): Expr {
    const t = this.target;
    const max = (p: Expr, q: Expr): Expr => fn('fmaxf', [p, q]);
    const abs = x.map((v) => fn('fabsf', [v]));
    let tree = abs;
    while (tree.length > 1) tree = tree.flatMap((v, i) => (i % 2 === 0 ? [max(v, tree[i + 1]!)] : []));
    const amax = b.var('amax', float32, tree[0]!);
    for (let o = 4; o >= 1; o /= 2) b.assign(amax, max(amax, t.shflXor(amax, o)));
    b.comment(`scale: 2^ceil(log2(max(amax / ${DSA_E4M3_MAX}, ${DSA_MLA_SCALE_FLOOR}))) in fp32, on the bits of the ratio`);
    const r = b.let('ratio', float32, max(fn('__fdiv_rn', [amax, f32(DSA_E4M3_MAX)]), f32(DSA_MLA_SCALE_FLOOR)));
    const bits = fn('__float_as_uint', [r], uint32);
    return b.let('scale', float32, fn('__uint_as_float', [bitAnd(add(bits, 0x7f_ffff), 0xff80_0000)]));
  }

  /** e4m3 = cvt.rn.satfinite(x · (1/s)) for the lane's 16 values: one 16-byte store at byte 16ℓ of the row. */
  private emitStoreNope(b: BlockBuilder, row: Expr, lane: Expr, x: readonly Expr[], s: Expr): void {
    const t = this.target;
    const inv = b.let('inv_scale', float32, fn('__fdiv_rn', [f32(1), s]));
    const q = x.map((v, i) => b.let(`q${i}`, float32, fn('__fmul_rn', [v, inv])));
    const pair = (i: number): Expr => packFp8x2(t, 'fp8e4m3fn', q[i]!, q[i + 1]!);
    const words = [0, 1, 2, 3].map((k) => bitOr(pair(4 * k), shl(pair(4 * k + 2), 16)));
    const packed = b.let('packed', uint4, call('make_uint4', words, uint4, { pure: true }));
    b.assign(index(cast(row, pointer(uint4)), lane), packed);
  }

  /** Lane 0 gathers the 4 tile scales (lanes 0, 8, 16, 24) and stores them as 16 bytes after the e4m3 values. */
  private emitStoreScales(b: BlockBuilder, row: Expr, lane: Expr, s: Expr): void {
    const t = this.target;
    const scales = [0, 1, 2, 3].map((j) => b.let(`scale${j}`, float32, t.shfl(s, 8 * j)));
    b.if(eq(lane, 0), (y) => {
      const bits = scales.map((v) => fn('__float_as_uint', [v], uint32));
      y.assign(index(cast(add(row, DSA_MLA_SCALE_OFFSET), pointer(uint4)), 0), call('make_uint4', bits, uint4, { pure: true }));
    });
  }
}
