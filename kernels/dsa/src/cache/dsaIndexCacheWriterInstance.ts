// The index-key cache writer: bf16 index keys → the paged e4m3 cache of 132 bytes per token.
import {
  add,
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
  mul,
  ne,
  packFp8x2,
  pointer,
  select,
  shl,
  sm90a,
  type BlockBuilder,
  type Expr,
  type SourceBuilder,
  type Target,
  uint32,
  uint8,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  DSA_AMAX_FLOOR,
  DSA_E4M3_MAX,
  DSA_INDEX_HEAD_DIM,
  DSA_PAGE_BYTES,
  DSA_PAGE_SCALE_OFFSET,
  DSA_PAGE_TOKENS,
  type DsaScaleFormat,
} from '../dsaShape.ts';

/** Threads of a writer CTA: 8 warps, one token per warp. */
export const DSA_CACHE_WRITER_THREADS = 256;

/** The Policy of one writer instance. */
export interface DsaIndexCacheWriterPolicy {
  readonly scaleFormat: DsaScaleFormat;
}

function writerParams() {
  return {
    keys: kernelParam.pointer(uint32, { const: true, align: 8 }),
    key_stride: kernelParam.i32({ range: [DSA_INDEX_HEAD_DIM, 2 ** 30] }),
    slots: kernelParam.pointer(int32, { const: true, align: 4 }),
    cache: kernelParam.pointer(uint8, { align: 16 }),
    tokens: kernelParam.i32({ range: [0, 2 ** 31 - 1] }),
  };
}

type WriterParams = ReturnType<typeof writerParams>;

/**
 * One cache-writer instance (sm_90a): token t (a warp; lane ℓ holds values 4ℓ … 4ℓ+3) reads its
 * 128 bf16 keys at `keys + t · key_stride` (bf16 elements, as 32-bit pairs), skips when
 * `slots[t] < 0`, else writes slot = page · 64 + offset of the cache: amax = max |k| (warp
 * shuffles), a = max(amax, 1e-4f), s = a / 448 (fp32, round to nearest; `ue8m0`: the smallest
 * power of two ≥ that), then e4m3 = cvt.rn.satfinite(k / s) into the page's value block and s into
 * its scale block (`dsaQuantizeIndexKeys` is the CPU twin).
 */
export class DsaIndexCacheWriterInstance extends KernelInstance<DsaIndexCacheWriterPolicy, WriterParams> {
  protected readonly sourceHeader = { title: 'DSA index-key cache writer', generator: '@tilekit/kernel-dsa' };

  constructor(policy: DsaIndexCacheWriterPolicy, target: Target = sm90a) {
    if (policy.scaleFormat !== 'fp32' && policy.scaleFormat !== 'ue8m0')
      throw new DsaArgumentError('policy.scaleFormat', 'must be fp32 or ue8m0', policy.scaleFormat);
    const threads = DSA_CACHE_WRITER_THREADS;
    const key = instanceKey('dsa_index_cache_writer', { scale: policy.scaleFormat, target: target.name }, { tags: { scale: 's' } });
    super({ key, policy: Object.freeze({ scaleFormat: policy.scaleFormat }), target, params: writerParams(), threads });
  }

  /** The launch for `tokens` keys: one warp per token. */
  launch(tokens: number): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    const warps = this.threads / 32;
    return { grid: [Math.max(1, Math.ceil(tokens / warps)), 1, 1], block: [this.threads, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
      const lane = b.let('lane', int32, bitAnd(tid, 31));
      const token = b.let('token', int32, add(mul(cast(t.blockIdx('x'), int32), this.threads / 32), div(tid, 32)));
      b.if(lt(token, a.tokens), (x) => {
        const slot = x.let('slot', int32, index(a.slots, token));
        x.if(ge(slot, 0), (y) => this.emitToken(y, a, token, lane, slot));
      });
    });
  }

  /** One warp quantizes and stores token `token` at cache slot `slot`. */
  private emitToken(b: BlockBuilder, a: { readonly [K in keyof WriterParams]: Expr }, token: Expr, lane: Expr, slot: Expr): void {
    const t = this.target;
    b.comment('4 bf16 keys per lane (two 32-bit pairs) → fp32');
    const row = b.let('row', int64, add(mul(cast(token, int64), cast(a.key_stride, int64)), cast(mul(lane, 4), int64)));
    const pairs = [0, 1].map((i) => b.let(`pair${i}`, uint32, index(a.keys, add(div(row, 2), i))));
    const k = pairs.flatMap((p, i) => [
      b.let(`k${2 * i}`, float32, call('__uint_as_float', [shl(p, 16)], float32, { pure: true })),
      b.let(`k${2 * i + 1}`, float32, call('__uint_as_float', [bitAnd(p, 0xffff_0000)], float32, { pure: true })),
    ]);
    const abs = (e: Expr): Expr => call('fabsf', [e], float32, { pure: true });
    const max = (x: Expr, y: Expr): Expr => call('fmaxf', [x, y], float32, { pure: true });
    const amax = b.var('amax', float32, max(max(abs(k[0]!), abs(k[1]!)), max(abs(k[2]!), abs(k[3]!))));
    for (let o = 16; o >= 1; o /= 2) b.assign(amax, max(amax, t.shflXor(amax, o)));
    b.comment(
      `scale: max(amax, ${DSA_AMAX_FLOOR}) / ${DSA_E4M3_MAX} in fp32${this.policy.scaleFormat === 'ue8m0' ? ', rounded up to a power of two' : ''}`,
    );
    const s = b.var('scale', float32, call('__fdiv_rn', [max(amax, f32(DSA_AMAX_FLOOR)), f32(DSA_E4M3_MAX)], float32, { pure: true }));
    if (this.policy.scaleFormat === 'ue8m0') {
      const bits = b.let('scale_bits', uint32, call('__float_as_uint', [s], uint32, { pure: true }));
      const up = select(ne(bitAnd(bits, 0x7f_ffff), 0), bitAnd(add(bits, 0x80_0000), 0xff80_0000), bits);
      b.assign(s, call('__uint_as_float', [up], float32, { pure: true }));
    }
    const q = k.map((v, i) => b.let(`q${i}`, float32, call('__fdiv_rn', [v, s], float32, { pure: true })));
    const packed = b.let(
      'packed',
      uint32,
      bitOr(packFp8x2(t, 'fp8e4m3fn', q[0]!, q[1]!), shl(packFp8x2(t, 'fp8e4m3fn', q[2]!, q[3]!), 16)),
    );
    const page = b.let('page_base', int64, mul(cast(div(slot, DSA_PAGE_TOKENS), int64), DSA_PAGE_BYTES));
    const offset = b.let('offset', int32, bitAnd(slot, DSA_PAGE_TOKENS - 1));
    const values = add(add(a.cache, page), cast(add(mul(offset, DSA_INDEX_HEAD_DIM), mul(lane, 4)), int64));
    b.assign(index(cast(values, pointer(uint32)), 0), packed);
    b.if(eq(lane, 0), (x) => {
      const scales = add(add(a.cache, page), cast(add(DSA_PAGE_SCALE_OFFSET, mul(offset, 4)), int64));
      x.assign(index(cast(scales, pointer(float32)), 0), s);
    });
  }
}
