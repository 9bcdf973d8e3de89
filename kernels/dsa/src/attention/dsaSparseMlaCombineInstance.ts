// The combine step of the split sparse MLA decode: each (query row, head) merges its splits' fp32 O by their LSE
// weights, applies the attention sink, and writes the final O, LSE and max logits in FlashMLA's decode layouts.
import {
  add,
  array,
  bitAnd,
  call,
  cast,
  div,
  eq,
  exp2Approx,
  float32,
  index,
  infinity,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lit,
  log2Approx,
  member,
  mod,
  mul,
  ne,
  opaque,
  packFloat2,
  pointer,
  select,
  sm90a,
  sub,
  type BlockBuilder,
  type Expr,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_SPARSE_MLA_TOPK_MAX, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_KEYS } from './dsaSparseMlaSmem.ts';

/** The policy of a combine instance: the most splits it merges (its shared weight array). */
export interface DsaSparseMlaCombinePolicy {
  readonly maxSplits: number;
}

/** The most splits a decode can have: one per 32-entry key tile of the largest top-k. */
export const DSA_SPARSE_MLA_MAX_SPLITS = DSA_SPARSE_MLA_TOPK_MAX / DSA_SPARSE_MLA_KEYS;

const THREADS = 128;
const WARPS = THREADS / 32;
/** Output columns per thread: 512 / 128, one float4 of each split's O. */
const THREAD_COLUMNS = DSA_SPARSE_MLA_V_DIM / THREADS;
const float4 = opaque('float4');
const uint2 = opaque('uint2');
const NEG_INF = infinity(float32, { negative: true });

function combineParams(target: Target) {
  const count = { range: [1, 2 ** 31 - 1] as const };
  return {
    o_accum: kernelParam.pointer(float32, { const: true, align: 16 }),
    lse_accum: kernelParam.pointer(float32, { const: true, align: 4 }),
    max_accum: kernelParam.pointer(float32, { const: true, align: 4 }),
    attn_sink: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
    out: kernelParam.pointer(target.dtypeType('bf16'), { align: 16 }),
    max_logits: kernelParam.pointer(float32, { align: 4 }),
    lse: kernelParam.pointer(float32, { align: 4 }),
    rows: kernelParam.i32(count),
    s_q: kernelParam.i32({ range: [1, 2] }),
    h_q: kernelParam.i32(count),
    splits: kernelParam.i32({ range: [1, DSA_SPARSE_MLA_MAX_SPLITS] }),
  };
}

type CombineParams = ReturnType<typeof combineParams>;
type CombineArgs = { readonly [K in keyof CombineParams]: Expr };

const fn = (name: string, args: readonly Expr[]): Expr => call(name, args, float32, { pure: true });
const fmax = (p: Expr, q: Expr): Expr => fn('fmaxf', [p, q]);

/** What the pair's block shares: its index, the thread, the split-entry stride, and the shared scratch. */
interface PairScope {
  readonly a: CombineArgs;
  readonly pair: Expr;
  readonly tid: Expr;
  readonly stride: Expr;
  readonly weights: Expr;
  readonly partial: Expr;
}

/**
 * One combine instance (sm_90a, 128 threads). Block x takes (row, head) = (x / h_q, x mod h_q) of rows · h_q: with m the
 * largest split LSE, w_s = 2^((lse_s − m)·log2 e) (ex2.approx; 0 for a split that saw no valid token) kept in shared memory, lse = m + ln Σ w_s
 * (−∞ when every split is empty), O = Σ_s w_s · O_s / Σ w_s (thread t owns columns 4t … 4t + 3, eight splits' loads in
 * flight), times 1 / (1 + e^(sink − lse)) with a sink; writes O bf16 [rows][h_q][512], LSE (+∞ when empty) and max
 * logits (the largest split's; −∞ when empty) at ((row / s_q) · h_q + head) · s_q + row mod s_q. The partial layouts
 * are those of the `partial` decode: entry (s · rows + row) · h_q + head.
 */
export class DsaSparseMlaCombineInstance extends KernelInstance<DsaSparseMlaCombinePolicy, CombineParams> {
  protected readonly sourceHeader = { title: 'DSA sparse MLA decode, split combine', generator: '@tilekit/kernel-dsa' };

  constructor(policy: DsaSparseMlaCombinePolicy, target: Target = sm90a) {
    const n = policy.maxSplits;
    if (!Number.isInteger(n) || n < 1 || n > DSA_SPARSE_MLA_MAX_SPLITS)
      throw new DsaArgumentError('policy.maxSplits', `must be an integer in [1, ${DSA_SPARSE_MLA_MAX_SPLITS}]`, n);
    const key = instanceKey('dsa_sparse_mla_combine', { maxSplits: n, target: target.name }, { tags: { maxSplits: 's' } });
    super({
      key,
      policy: Object.freeze({ maxSplits: n }),
      target,
      params: combineParams(target),
      threads: THREADS,
      staticSharedBytes: 4 * (n + 2 * WARPS),
    });
  }

  /** The launch for `rows · hQ` (row, head) pairs: one block each. */
  launch(
    rows: number,
    hQ: number,
  ): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, rows * hQ), 1, 1], block: [THREADS, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: THREADS } }, (b, a) => {
      const weights = b.declare('weights', array(float32, this.policy.maxSplits), null, { storage: 'mutable', qualifiers: ['__shared__'] });
      const partial = b.declare('partial', array(float32, 2 * WARPS), null, { storage: 'mutable', qualifiers: ['__shared__'] });
      const s: PairScope = {
        a,
        pair: b.let('pair', int32, cast(t.blockIdx('x'), int32)),
        tid: b.let('tid', int32, cast(t.threadIdx('x'), int32)),
        stride: b.let('split_stride', int64, mul(cast(a.rows, int64), cast(a.h_q, int64))),
        weights,
        partial,
      };
      this.emitPair(b, s);
    });
  }

  /** Entry `s` of the partial LSE / max arrays for the block's pair. */
  private at(s: PairScope, split: Expr): Expr {
    return add(mul(cast(split, int64), s.stride), cast(s.pair, int64));
  }

  /** Reduces `v` (one value per thread) over the block with `op` through the shared partials (slot 0 or 1); every thread gets the result. */
  private blockReduce(b: BlockBuilder, s: PairScope, v: Expr, op: (p: Expr, q: Expr) => Expr, slot: number): void {
    const t = this.target;
    for (let o = 16; o >= 1; o /= 2) b.assign(v, op(v, t.shflXor(v, o)));
    b.if(eq(bitAnd(s.tid, 31), 0), (x) => x.assign(index(s.partial, add(slot * WARPS, div(s.tid, 32))), v));
    b.push(t.syncThreads());
    b.assign(v, index(s.partial, slot * WARPS));
    for (let w = 1; w < WARPS; w++) b.assign(v, op(v, index(s.partial, slot * WARPS + w)));
  }

  private emitPair(b: BlockBuilder, s: PairScope): void {
    const a = s.a;
    b.comment('the largest split LSE and max logit over the block, then the weights e^(lse_s − m) and their sum');
    const m = b.var('m', float32, NEG_INF);
    const mx = b.var('mx', float32, NEG_INF);
    b.forRange({ name: 's', from: s.tid, to: a.splits, step: THREADS }, (l, i) => {
      l.assign(m, fmax(m, index(a.lse_accum, this.at(s, i))));
      l.assign(mx, fmax(mx, index(a.max_accum, this.at(s, i))));
    });
    this.blockReduce(b, s, m, fmax, 0);
    this.blockReduce(b, s, mx, fmax, 1);
    const live = b.let('live', int32, select(ne(m, NEG_INF), 1, 0));
    const sum = b.var('sum', float32, lit(0, float32));
    b.forRange({ name: 's', from: s.tid, to: a.splits, step: THREADS }, (l, i) => {
      const ls = l.let('ls', float32, index(a.lse_accum, this.at(s, i)));
      const w = l.let('w', float32, select(ne(ls, NEG_INF), exp2Approx(this.target, mul(sub(ls, m), Math.LOG2E)), lit(0, float32)));
      l.assign(index(s.weights, i), w);
      l.assign(sum, add(sum, w));
    });
    b.push(this.target.syncThreads());
    this.blockReduce(b, s, sum, add, 0);
    const lse = b.let('lse_all', float32, select(ne(live, 0), add(m, mul(log2Approx(this.target, sum), Math.LN2)), NEG_INF));
    const acc = Array.from({ length: THREAD_COLUMNS }, (_, i) => b.var(`acc${i}`, float32, lit(0, float32)));
    const column = b.let('column', int64, cast(mul(s.tid, THREAD_COLUMNS), int64));
    b.forRange({ name: 's', to: a.splits, unroll: 8 }, (l, i) => {
      const at = add(mul(this.at(s, i), DSA_SPARSE_MLA_V_DIM), column);
      const v = l.let('o', float4, index(cast(add(a.o_accum, at), pointer(float4, { const: true })), 0));
      const w = l.let('w', float32, index(s.weights, i));
      ['x', 'y', 'z', 'w'].forEach((f, j) => l.assign(acc[j]!, add(acc[j]!, mul(w, member(v, f, float32)))));
    });
    this.emitStore(b, s, { lse, mx, live, sum, acc, column });
  }

  private emitStore(
    b: BlockBuilder,
    s: PairScope,
    v: { lse: Expr; mx: Expr; live: Expr; sum: Expr; acc: readonly Expr[]; column: Expr },
  ): void {
    const a = s.a;
    const t = this.target;
    const head = b.let('head', int32, mod(s.pair, a.h_q));
    const f = b.var('scale', float32, select(ne(v.live, 0), fn('__frcp_rn', [v.sum]), lit(0, float32)));
    b.if(ne(select(a.attn_sink, 1, 0), 0), (x) =>
      x.if(ne(v.live, 0), (y) =>
        y.assign(f, mul(f, fn('__frcp_rn', [add(lit(1, float32), exp2Approx(t, mul(sub(index(a.attn_sink, head), v.lse), Math.LOG2E)))]))),
      ),
    );
    const words = [0, 1].map((i) => packFloat2(t, 'bf16', mul(v.acc[2 * i]!, f), mul(v.acc[2 * i + 1]!, f)));
    const dst = add(a.out, add(mul(cast(s.pair, int64), DSA_SPARSE_MLA_V_DIM), v.column));
    b.assign(index(cast(dst, pointer(uint2)), 0), call('make_uint2', words, uint2, { pure: true }));
    b.if(eq(s.tid, 0), (x) => {
      const row = x.let('row', int32, div(s.pair, a.h_q));
      const seq = div(row, a.s_q);
      const rowHead = add(mul(cast(seq, int64), cast(a.h_q, int64)), cast(head, int64));
      const scalar = x.let('scalar_at', int64, add(mul(rowHead, cast(a.s_q, int64)), cast(mod(row, a.s_q), int64)));
      x.assign(index(a.lse, scalar), select(ne(v.live, 0), v.lse, infinity(float32)));
      x.assign(index(a.max_logits, scalar), v.mx);
    });
  }
}
