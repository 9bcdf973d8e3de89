// The second pass of Sparge's K smoothing: km[b][head][c] = (Σ over the chunks, in a fixed order, of
// the partial sums) / seqlen_b. One block per (K head, batch); each thread sums a fixed subset of the
// chunks of one column, then the subsets are added in order through shared memory.
import {
  add,
  bool,
  cast,
  div,
  float32,
  gt,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lt,
  mod,
  mul,
  ne,
  select,
  sm90a,
  type SourceBuilder,
  sub,
  f32,
  type Target,
} from '@tilekit/codegen';
import { BlockEmitter, reduceSum } from '@tilekit/tile';
import {
  checkSpargeRowPolicy,
  SPARGE_POOL_MAX_ROWS,
  SPARGE_POOL_THREADS,
  spargeSharedBytes,
  type SpargeRowKernelLaunch,
} from './spargePoolPolicy.ts';
import { sumWarpRows } from './spargePoolReduce.ts';

/** The Policy of one K-mean finalize instance (it reads fp32 partials: no dtype). */
export interface SpargeKeyMeanFinalizePolicy {
  readonly headDim: number;
}

function finalizeParams() {
  return {
    partial: kernelParam.pointer(float32, { const: true, align: 4 }),
    km: kernelParam.pointer(float32, { align: 4 }),
    heads: kernelParam.i32({ range: [1, 65535] }),
    chunks_max: kernelParam.i32({ range: [1, 65535] }),
    chunk_rows: kernelParam.i32({ range: [1, SPARGE_POOL_MAX_ROWS] }),
    seqlen: kernelParam.i32({ range: [0, SPARGE_POOL_MAX_ROWS] }),
    seqstart: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    /** 0: K smoothing off, km = 0 (the partials are not read). */
    smooth: kernelParam.i32({ range: [0, 1] }),
  };
}

type FinalizeParams = ReturnType<typeof finalizeParams>;

/**
 * One K-mean finalize kernel: block (head, b) writes km[(b·heads + head)·d + c] = S / seqlen_b (0 for
 * an empty sequence or with `smooth` = 0), S = Σ_g (Σ_{chunk ≡ g mod G, ascending} partial[…chunk…][c])
 * over g = 0 … G − 1 in order (G = threads / d), the chunks being the ⌈seqlen_b / chunk_rows⌉ that
 * the partial pass wrote. Deterministic: the order depends only on the shape.
 * Postcondition (GPU spec): equals `spargeKeyMean` within fp32 rounding.
 */
export class SpargeKeyMeanFinalizeInstance extends KernelInstance<SpargeKeyMeanFinalizePolicy, FinalizeParams> {
  protected readonly sourceHeader = { title: 'sparge K mean (finalize)', generator: '@tilekit/kernel-sparge' };

  constructor(policy: SpargeKeyMeanFinalizePolicy, target: Target = sm90a) {
    checkSpargeRowPolicy({ dtype: 'fp16', headDim: policy.headDim });
    const threads = SPARGE_POOL_THREADS;
    const key = instanceKey(
      'sparge_key_mean_finalize',
      { hdim: policy.headDim, threads, target: target.name },
      { tags: { hdim: 'd', threads: 't' } },
    );
    super({
      key,
      policy: Object.freeze({ ...policy }),
      target,
      params: finalizeParams(),
      threads,
      staticSharedBytes: spargeSharedBytes([threads]),
    });
  }

  /** Grid: (heads, batch). */
  launch(batch: number, heads: number): SpargeRowKernelLaunch {
    return { grid: [heads, batch, 1], block: [this.threads, 1, 1], sharedBytes: 0 };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const D = this.policy.headDim;
    const groups = this.threads / D;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 4 } }, (b, a) => {
      const head = b.let('head', int32, cast(t.blockIdx('x'), int32));
      const batch = b.let('batch', int32, cast(t.blockIdx('y'), int32));
      const group = b.let('group_mode', bool, ne(select(a.seqstart, 1, 0), 0));
      const seqlen = b.declare('seq_rows', int32, a.seqlen, { storage: 'mutable' });
      b.if(group, (g) => g.assign(seqlen, sub(index(a.seqstart, add(batch, 1)), index(a.seqstart, batch))));
      const chunks = b.let('chunks', int32, select(ne(a.smooth, 0), div(add(seqlen, sub(a.chunk_rows, 1)), a.chunk_rows), 0));
      const bh = b.let('bh', int64, add(mul(cast(batch, int64), a.heads), cast(head, int64)));
      const block = new BlockEmitter(b, t, { numThreads: this.threads });
      const smem = block.shared('key_mean_groups', float32, this.threads);
      block.threads((th) => {
        const col = th.b.let('col', int32, mod(th.tid, D));
        const g = th.b.let('g', int32, div(th.tid, D));
        const acc = th.b.declare('acc', float32, f32(0), { storage: 'mutable' });
        const base = th.b.let('chunk_base', int64, mul(bh, cast(a.chunks_max, int64)));
        th.b.forRange({ name: 'c', from: g, to: chunks, step: groups, unroll: 4 }, (l, c) => {
          l.assign(acc, add(acc, index(a.partial, add(mul(add(base, cast(c, int64)), D), cast(col, int64)))));
        });
        th.b.assign(index(smem, th.tid), acc);
      });
      block.sync();
      block.threads((th) => {
        th.b.if(lt(th.tid, D), (s) => {
          const total = sumWarpRows({ ...th, b: s }, smem, groups, D, th.tid, reduceSum);
          s.assign(index(a.km, add(mul(bh, D), cast(th.tid, int64))), select(gt(seqlen, 0), div(total, cast(seqlen, float32)), f32(0)));
        });
      });
    });
  }
}
