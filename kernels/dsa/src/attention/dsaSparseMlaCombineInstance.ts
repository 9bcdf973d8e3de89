// The combine step of the split sparse MLA decode: each (query row, head) merges its splits' fp32 O by their LSE
// weights, applies the attention sink, and writes the final O, LSE and max logits in FlashMLA's decode layouts.
import {
  add,
  and,
  bitAnd,
  call,
  cast,
  div,
  eq,
  float32,
  index,
  infinity,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lit,
  lt,
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
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';

/** The policy of a combine instance: warps per block (one (row, head) per warp). */
export interface DsaSparseMlaCombinePolicy {
  readonly warps: number;
}

const float4 = opaque('float4');
const uint4 = opaque('uint4');
/** Output columns per lane: 512 / 32. */
const LANE_COLUMNS = DSA_SPARSE_MLA_V_DIM / 32;

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
    splits: kernelParam.i32(count),
  };
}

type CombineParams = ReturnType<typeof combineParams>;
type CombineArgs = { readonly [K in keyof CombineParams]: Expr };

const fn = (name: string, args: readonly Expr[]): Expr => call(name, args, float32, { pure: true });
const NEG_INF = infinity(float32, { negative: true });

/**
 * One combine instance (sm_90a, 32 · warps threads). Warp w of the grid takes (row, head) = (w / h_q, w mod h_q)
 * of rows · h_q: with m the largest split LSE, lse = m + ln Σ_s e^(lse_s − m) (−∞ when every split saw no valid
 * token), O = Σ_s e^(lse_s − lse) · O_s (lane ℓ owns columns 16ℓ … 16ℓ + 15), times 1 / (1 + e^(sink − lse)) with a
 * sink; writes O bf16 [rows][h_q][512], LSE (+∞ when empty) and max logits (the largest split's; −∞ when empty)
 * at ((row / s_q) · h_q + head) · s_q + row mod s_q. The partial layouts are those of the `partial` decode.
 */
export class DsaSparseMlaCombineInstance extends KernelInstance<DsaSparseMlaCombinePolicy, CombineParams> {
  protected readonly sourceHeader = { title: 'DSA sparse MLA decode, split combine', generator: '@tilekit/kernel-dsa' };

  constructor(policy: DsaSparseMlaCombinePolicy, target: Target = sm90a) {
    const warps = policy.warps;
    if (!Number.isInteger(warps) || warps < 1 || warps > 32)
      throw new DsaArgumentError('policy.warps', 'must be an integer in [1, 32]', warps);
    const key = instanceKey('dsa_sparse_mla_combine', { warps, target: target.name }, { tags: { warps: 'w' } });
    super({ key, policy: Object.freeze({ warps }), target, params: combineParams(target), threads: 32 * warps });
  }

  /** The launch for `rows · hQ` (row, head) pairs: one warp each. */
  launch(
    rows: number,
    hQ: number,
  ): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, Math.ceil((rows * hQ) / this.policy.warps)), 1, 1], block: [this.threads, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32));
      const lane = b.let('lane', int32, bitAnd(tid, 31));
      const pair = b.let('pair', int32, add(mul(cast(t.blockIdx('x'), int32), this.policy.warps), div(tid, 32)));
      b.if(lt(pair, mul(a.rows, a.h_q)), (x) => this.emitPair(x, a, pair, lane));
    });
  }

  /** A warp-wide reduction of `v` with `op` over the 32 lanes (xor butterfly). */
  private allReduce(b: BlockBuilder, v: Expr, op: (p: Expr, q: Expr) => Expr): void {
    for (let o = 16; o >= 1; o /= 2) b.assign(v, op(v, this.target.shflXor(v, o)));
  }

  private emitPair(b: BlockBuilder, a: CombineArgs, pair: Expr, lane: Expr): void {
    const stride = b.let('split_stride', int64, mul(cast(a.rows, int64), cast(a.h_q, int64)));
    const at = (s: Expr): Expr => add(mul(cast(s, int64), stride), cast(pair, int64));
    b.comment('the largest split LSE and max logit, then the sum of the splits weights');
    const m = b.var('m', float32, NEG_INF);
    const mx = b.var('mx', float32, NEG_INF);
    b.forRange({ name: 's', from: lane, to: a.splits, step: 32 }, (l, s) => {
      l.assign(m, fn('fmaxf', [m, index(a.lse_accum, at(s))]));
      l.assign(mx, fn('fmaxf', [mx, index(a.max_accum, at(s))]));
    });
    const max = (p: Expr, q: Expr): Expr => fn('fmaxf', [p, q]);
    this.allReduce(b, m, max);
    this.allReduce(b, mx, max);
    const live = b.let('live', int32, select(ne(m, NEG_INF), 1, 0));
    const sum = b.var('sum', float32, lit(0, float32));
    b.forRange({ name: 's', from: lane, to: a.splits, step: 32 }, (l, s) => {
      const ls = l.let('ls', float32, index(a.lse_accum, at(s)));
      l.if(ne(ls, NEG_INF), (y) => y.assign(sum, add(sum, fn('expf', [sub(ls, m)]))));
    });
    this.allReduce(b, sum, add);
    const lse = b.let('lse_all', float32, select(ne(live, 0), add(m, fn('logf', [sum])), NEG_INF));
    const acc = Array.from({ length: LANE_COLUMNS }, (_, i) => b.var(`acc${i}`, float32, lit(0, float32)));
    b.forRange({ name: 's', to: a.splits }, (l, s) => {
      const ls = l.let('ls', float32, index(a.lse_accum, at(s)));
      l.if(ne(ls, NEG_INF), (y) => {
        const w = y.let('w', float32, fn('expf', [sub(ls, lse)]));
        const row = y.let(
          'o_row',
          pointer(float4, { const: true }),
          cast(add(a.o_accum, mul(at(s), DSA_SPARSE_MLA_V_DIM)), pointer(float4, { const: true })),
        );
        for (let k = 0; k < LANE_COLUMNS / 4; k++) {
          const v = y.let(`o${k}`, float4, index(row, add(mul(lane, LANE_COLUMNS / 4), k)));
          ['x', 'y', 'z', 'w'].forEach((f, j) => y.assign(acc[4 * k + j]!, add(acc[4 * k + j]!, mul(w, member(v, f, float32)))));
        }
      });
    });
    this.emitStore(b, a, { pair, lane, lse, mx, live, acc });
  }

  private emitStore(
    b: BlockBuilder,
    a: CombineArgs,
    v: { pair: Expr; lane: Expr; lse: Expr; mx: Expr; live: Expr; acc: readonly Expr[] },
  ): void {
    const t = this.target;
    const head = b.let('head', int32, mod(v.pair, a.h_q));
    const hasSink = and(ne(v.live, 0), ne(select(a.attn_sink, 1, 0), 0));
    const f = b.var('sink_factor', float32, lit(1, float32));
    b.if(hasSink, (x) => x.assign(f, div(lit(1, float32), add(lit(1, float32), fn('expf', [sub(index(a.attn_sink, head), v.lse)])))));
    const words = Array.from({ length: LANE_COLUMNS / 2 }, (_, i) =>
      packFloat2(t, 'bf16', mul(v.acc[2 * i]!, f), mul(v.acc[2 * i + 1]!, f)),
    );
    const dst = b.let(
      'out_row',
      pointer(uint4),
      cast(add(a.out, add(mul(cast(v.pair, int64), DSA_SPARSE_MLA_V_DIM), cast(mul(v.lane, LANE_COLUMNS), int64))), pointer(uint4)),
    );
    for (const h of [0, 1]) b.assign(index(dst, h), call('make_uint4', words.slice(4 * h, 4 * h + 4), uint4, { pure: true }));
    b.if(eq(v.lane, 0), (x) => {
      const row = x.let('row', int32, div(v.pair, a.h_q));
      const seq = div(row, a.s_q);
      const scalar = x.let(
        'scalar_at',
        int64,
        add(mul(add(mul(cast(seq, int64), cast(a.h_q, int64)), cast(head, int64)), cast(a.s_q, int64)), cast(mod(row, a.s_q), int64)),
      );
      x.assign(index(a.lse, scalar), select(ne(v.live, 0), v.lse, infinity(float32)));
      x.assign(index(a.max_logits, scalar), v.mx);
    });
  }
}
