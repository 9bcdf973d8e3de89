// The exact top-k selection for rows up to C · capacity positions: one thread-block cluster of C
// CTAs per row, each CTA owning a contiguous slice of it. Each CTA reads its slice ONCE (its keys
// stay in registers, unroll · vector per thread), the radix passes (digits 12/10/10) sum their
// histograms over the cluster through distributed shared memory (dsaTopkClusterExchange), and the
// final selection places every CTA by an exclusive scan of the cluster's (above, equal) counts, ties
// going to the lower slices. Built from the single-CTA kernel's steps (keys, histogram adds,
// threshold search, block scan, output hooks); dsaTopkClusterPlan is its TS twin, pass for pass.
import {
  add,
  bitAnd,
  bitOr,
  bitXor,
  call,
  cast,
  clusterCtaRank,
  declareAlignedDynamicShared,
  eq,
  float32,
  gt,
  index,
  int32,
  int64,
  KernelInstance,
  lit,
  lt,
  maxOf,
  minOf,
  mul,
  ne,
  pointer,
  select,
  shl,
  shr,
  sm90a,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type KernelParams,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { emitBlockExclusiveScan, type BlockScanSite } from '@tilekit/tile';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_DIGIT_BITS } from './dsaRadixSelectPlan.ts';
import { emitDsaTopkClusterAllGather, emitDsaTopkClusterHistogramSum, type DsaTopkClusterSite } from './dsaTopkClusterExchange.ts';
import { DSA_TOPK_SLICE_GRANULE } from './dsaTopkClusterPlan.ts';
import {
  DSA_TOPK_HIST_BINS,
  DSA_TOPK_SMEM_ALIGN,
  DSA_TOPK_SPARE_BINS,
  dsaTopkCheckOneOf,
  dsaTopkCheckOutput,
  dsaTopkInstanceSpec,
  emitDsaTopkNarrowingIf,
  emitDsaTopkOutRow,
  emitDsaTopkPadding,
  emitDsaTopkPass1Adds,
  emitDsaTopkRowLength,
  emitDsaTopkThreadIds,
  emitDsaTopkThresholdKey,
  emitDsaTopkVotedAdds,
  emitDsaTopkZero,
  type DsaTopkCtaPolicy,
  type DsaTopkLaunch,
} from './dsaTopkInstanceParts.ts';
import { emitDsaTopkSliceLoad } from './dsaTopkSliceLoad.ts';
import { DSA_TOPK_STATE, DSA_TOPK_STATE_SLOTS, emitDsaTopkThresholdBin } from './dsaTopkThresholdBin.ts';

/** CTAs per cluster an instance may take (8 is the portable maximum; 1 is one CTA per row with the same pipeline). */
export const DSA_TOPK_CLUSTER_SIZES: readonly number[] = Object.freeze([1, 2, 4, 8]);

/** Threads per CTA a cluster instance may take. */
export const DSA_TOPK_CLUSTER_THREADS: readonly number[] = Object.freeze([512, 1024]);

/** Keys each thread may hold (unroll · vector). */
export const DSA_TOPK_CLUSTER_KEYS_PER_THREAD: readonly number[] = Object.freeze([4, 8, 16, 32]);

const [DIGIT1, DIGIT2, DIGIT3] = DSA_TOPK_DIGIT_BITS as [number, number, number];
const SCRATCH_WORDS = 32;
/** Keys per warp vote in passes 2 and 3 (a group none of whose keys is in the bin skips its adds). */
const VOTE_GROUP = 4;

const popc = (x: Expr): Expr => call('__popc', [x], int32, { pure: true });

/** The Policy of one cluster top-k instance: threads one of DSA_TOPK_CLUSTER_THREADS, unroll · vector one of DSA_TOPK_CLUSTER_KEYS_PER_THREAD. */
export interface DsaTopkClusterPolicy extends DsaTopkCtaPolicy {
  /** One of DSA_TOPK_CLUSTER_SIZES: CTAs per row. */
  readonly cluster: number;
}

/** The launch of a cluster instance: `cluster` consecutive CTAs of the grid per row (the cluster shape is compiled in). */
export interface DsaTopkClusterLaunch extends DsaTopkLaunch {
  readonly cluster: readonly [number, number, number];
}

/** Byte offsets of the shared memory, from its aligned start: histogram | summed histogram (clusters only) | scan scratch | state | gathered counts. */
export function dsaTopkClusterSharedLayout(cluster: number): {
  readonly reduced: number;
  readonly scratch: number;
  readonly state: number;
  readonly gathered: number;
  readonly bytes: number;
} {
  const reduced = (DSA_TOPK_HIST_BINS + DSA_TOPK_SPARE_BINS) * 4;
  const scratch = reduced + (cluster > 1 ? DSA_TOPK_HIST_BINS * 4 : 0);
  const state = scratch + SCRATCH_WORDS * 4;
  const gathered = state + DSA_TOPK_STATE_SLOTS * 4;
  return { reduced, scratch, state, gathered, bytes: DSA_TOPK_SMEM_ALIGN + gathered + cluster * 4 };
}

function checkPolicy(policy: DsaTopkClusterPolicy): void {
  dsaTopkCheckOneOf('policy.cluster', DSA_TOPK_CLUSTER_SIZES, policy.cluster);
  dsaTopkCheckOneOf('policy.threads', DSA_TOPK_CLUSTER_THREADS, policy.threads);
  if (policy.vector !== 1 && policy.vector !== 4) throw new DsaArgumentError('policy.vector', 'must be 1 or 4', policy.vector);
  if (!Number.isSafeInteger(policy.unroll) || !DSA_TOPK_CLUSTER_KEYS_PER_THREAD.includes(policy.unroll * policy.vector))
    throw new DsaArgumentError(
      'policy.unroll',
      `× vector must be one of ${DSA_TOPK_CLUSTER_KEYS_PER_THREAD.join(', ')} (keys per thread)`,
      policy.unroll,
    );
  dsaTopkCheckOutput(policy.output);
}

/** The emitted kernel's view of its CTA. */
interface CtaContext {
  readonly args: Readonly<Record<string, Expr>>;
  readonly site: BlockScanSite;
  readonly cluster: DsaTopkClusterSite;
  readonly lane: Expr;
  readonly rowIndex: Expr;
  readonly hist: Expr;
  /** The histogram the threshold search reads: the cluster's sum (or `hist` itself without a cluster). */
  readonly reduced: Expr;
  readonly state: Expr;
  readonly gathered: Expr;
  /** This thread's keys, in position order; `first` is the slice position of keys[0] and `start` the slice's in the row. */
  readonly keys: readonly Expr[];
  readonly first: Expr;
  readonly start: Expr;
  readonly sliceLength: Expr;
}

/** One radix pass: its name, bins, the count still to select, and the adds of this thread's keys. */
interface Pass {
  readonly name: string;
  readonly bins: number;
  readonly remaining: Expr;
  readonly first: boolean;
  readonly add: (b: BlockBuilder) => void;
}

/**
 * One cluster top-k instance (sm_90a). For row r of fp32 logits [rows][row_stride] (CTAs r · C …
 * r · C + C − 1, one cluster) and its length (lengths[r] clamped to [0, row_stride], or row_stride
 * when `lengths` is null) it writes out[r][0, k) as dsaTopkReference in the output hook's form: the
 * kept positions ascending, then −1. CTA q owns positions [q · S, (q + 1) · S) with S =
 * dsaTopkClusterSlice(row_stride, C) ≤ threads · unroll · vector; row_stride ≤ C · that (the launcher
 * dispatches longer rows to DsaTopkInstance). Passes: histograms of 12, 10, 10 key bits over the
 * keys in registers, each summed over the cluster (two cluster barriers), a pass whose threshold bin
 * is taken whole ends the search; then each CTA's (above, equal) counts are gathered (one cluster
 * barrier) and its kept positions written through the output hook in slice order.
 * @throws DsaArgumentError for a policy outside DSA_TOPK_CLUSTER_SIZES, DSA_TOPK_CLUSTER_THREADS, the keys per thread or the output hooks.
 */
export class DsaTopkClusterInstance extends KernelInstance<DsaTopkClusterPolicy, KernelParams> {
  protected readonly sourceHeader = {
    title: 'dsa exact top-k selection, one thread-block cluster per row',
    generator: '@tilekit/kernel-dsa',
  };
  /** Positions one CTA holds: threads · unroll · vector. */
  readonly sliceCapacity: number;
  /** The longest row stride the instance serves: cluster · sliceCapacity. */
  readonly maxRowStride: number;

  constructor(policy: DsaTopkClusterPolicy, target: Target = sm90a) {
    checkPolicy(policy);
    const capacity = policy.threads * policy.unroll * policy.vector;
    super(
      dsaTopkInstanceSpec(policy, target, {
        family: 'dsa_topk_cluster',
        before: [['cluster', 'c', policy.cluster]],
        after: [],
        maxRowStride: policy.cluster * capacity,
        sharedBytes: dsaTopkClusterSharedLayout(policy.cluster).bytes,
      }),
    );
    this.sliceCapacity = capacity;
    this.maxRowStride = policy.cluster * capacity;
  }

  /**
   * The launch for `rows` rows: C CTAs each.
   * @throws DsaArgumentError naming `rows` when rows · C exceeds the grid's 2^31 − 1 CTAs.
   */
  launch(rows: number): DsaTopkClusterLaunch {
    const c = this.policy.cluster;
    if (!Number.isSafeInteger(rows) || rows < 1 || rows * c > 2 ** 31 - 1)
      throw new DsaArgumentError('rows', `must be an integer in [1, ${Math.floor((2 ** 31 - 1) / c)}] for ${c} CTAs per row`, rows);
    return { grid: [rows * c, 1, 1], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes, cluster: [c, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const T = this.threads;
    const C = this.policy.cluster;
    const attributes = C > 1 ? [`__cluster_dims__(${C}, 1, 1)`] : [];
    const launchBounds = { maxThreads: T, minBlocksPerSm: T <= 512 ? 2 : 1 };
    this.signature.defineEntry(src, { launchBounds, attributes }, (b, params) => {
      const a = params as Readonly<Record<string, Expr>>;
      const { tid, lane } = emitDsaTopkThreadIds(b, t, T);
      const rowIndex = b.let('row', int32, shr(cast(t.blockIdx('x'), int32), Math.log2(C)));
      const rank = C > 1 ? b.let('rank', int32, cast(clusterCtaRank(t), int32)) : lit(0, int32);
      const offset = mul(cast(rowIndex, int64), cast(a['row_stride']!, int64));
      const length = emitDsaTopkRowLength(b, a, rowIndex);
      b.comment(`the slice of this CTA: dsaTopkClusterSlice(row_stride, ${C}) positions from rank * slice`);
      const granule = DSA_TOPK_SLICE_GRANULE;
      const perCta = shr(add(a['row_stride']!, C - 1), Math.log2(C));
      const slice = b.let('slice', int32, bitAnd(add(perCta, granule - 1), -granule));
      const start = b.let('slice_start', int32, mul(rank, slice));
      const sliceLength = b.let('slice_length', int32, minOf(maxOf(sub(length, start), 0), slice));
      const logits = b.let('slice_logits', pointer(float32, { const: true }), add(add(a['logits']!, offset), cast(start, int64)));
      b.comment(
        `dynamic shared memory: histogram int32[4096 + 32 spare] | ${C > 1 ? 'cluster sum int32[4096] | ' : ''}` +
          `scan scratch int32[32] | state int32[4] | gathered counts uint32[${C}]`,
      );
      const layout = dsaTopkClusterSharedLayout(C);
      const { smem } = declareAlignedDynamicShared(b, t, 'dsa_topk_smem', DSA_TOPK_SMEM_ALIGN);
      const at = (name: string, bytes: number, type = int32): Expr => b.let(name, pointer(type), cast(add(smem, bytes), pointer(type)));
      const hist = b.let('hist', pointer(int32), cast(smem, pointer(int32)));
      const reduced = C > 1 ? at('reduced', layout.reduced) : hist;
      const site: BlockScanSite = { target: t, threads: T, tid, scratch: at('scratch', layout.scratch) };
      const state = at('state', layout.state);
      const gathered = at('gathered', layout.gathered, uint32);
      b.comment('the one read of the row: this thread keeps the keys of its unroll * vector positions of the slice in registers');
      const { keys, first } = emitDsaTopkSliceLoad(b, {
        target: t,
        vector: this.policy.vector,
        unroll: this.policy.unroll,
        tid,
        logits,
        length: sliceLength,
      });
      const ctx: CtaContext = {
        args: a,
        site,
        cluster: { target: t, cluster: C, threads: T, tid, rank },
        lane,
        rowIndex,
        hist,
        reduced,
        state,
        gathered,
        keys,
        first,
        start,
        sliceLength,
      };
      this.emitSelection(b, ctx);
    });
  }

  /**
   * One pass: (zero the histogram,) this thread's adds, the histogram summed over the cluster, the
   * threshold search. Without a cluster the histogram is zeroed before each pass; with one, after
   * the sum (the local histogram is free then, and the search's barrier orders the zeroing).
   * Returns the searched histogram's total.
   */
  private emitPass(b: BlockBuilder, ctx: CtaContext, pass: Pass): Expr {
    const { site, hist } = ctx;
    const C = this.policy.cluster;
    if (pass.first || C === 1) {
      emitDsaTopkZero(b, site, hist, pass.bins);
      b.push(site.target.syncThreads());
    }
    pass.add(b);
    if (C === 1) b.push(site.target.syncThreads());
    else {
      emitDsaTopkClusterHistogramSum(b, ctx.cluster, { local: hist, reduced: ctx.reduced, bins: pass.bins });
      emitDsaTopkZero(b, site, hist, 2 ** DIGIT2);
    }
    return emitDsaTopkThresholdBin(b, site, pass.name, { hist: ctx.reduced, bins: pass.bins, remaining: pass.remaining, state: ctx.state });
  }

  /** Adds of the keys where `inBin` holds, to bin `digit` (a warp vote per group of keys skips groups with none). */
  private emitVotedAdds(b: BlockBuilder, ctx: CtaContext, inBin: (key: Expr) => Expr, digit: (key: Expr) => Expr): void {
    for (let g = 0; g < ctx.keys.length; g += VOTE_GROUP) {
      const site = { target: ctx.site.target, hist: ctx.hist, lane: ctx.lane };
      emitDsaTopkVotedAdds(b, site, ctx.keys.slice(g, g + VOTE_GROUP), 'in_bin', { inBin, digit });
    }
  }

  /** Pass 1, the narrowing passes when the row has more than k candidates, the cluster-ordered write and the padding. */
  private emitSelection(b: BlockBuilder, ctx: CtaContext): void {
    const k = ctx.args['k']!;
    b.comment(`pass 1: histogram of the top ${DIGIT1} bits of every candidate's key`);
    const candidates = b.let(
      'candidates',
      int32,
      this.emitPass(b, ctx, {
        name: 'bin1',
        bins: DSA_TOPK_HIST_BINS,
        remaining: k,
        first: true,
        add: (x) => x.if(lt(ctx.first, ctx.sliceLength), (y) => emitDsaTopkPass1Adds(y, ctx.hist, ctx.keys, ctx.lane)),
      }),
    );
    const { threshold, equalTaken, selected } = emitDsaTopkNarrowingIf(b, candidates, k, (x, th, eqTaken) =>
      this.emitNarrowing(x, ctx, th, eqTaken),
    );
    this.emitWrite(b, ctx, threshold, equalTaken);
    const from = add(selected, add(mul(ctx.cluster.rank, this.threads), ctx.site.tid));
    emitDsaTopkPadding(b, ctx.args, ctx.rowIndex, { from, step: this.policy.cluster * this.threads }, ' (the cluster shares them)');
  }

  /** Passes 2 and 3 over the keys in registers (each stopping early when its threshold bin is taken whole): sets the threshold and equalTaken. */
  private emitNarrowing(b: BlockBuilder, ctx: CtaContext, threshold: Expr, equalTaken: Expr): void {
    const read = (x: BlockBuilder, name: string, slot: number): Expr => x.let(name, int32, index(ctx.state, slot));
    const bin1 = b.let('bin1_u', uint32, cast(read(b, 'bin1', DSA_TOPK_STATE.bin), uint32));
    const count1 = read(b, 'count1', DSA_TOPK_STATE.count);
    const remaining = b.var('remaining', int32, sub(ctx.args['k']!, read(b, 'above1', DSA_TOPK_STATE.above)));
    const lowest = (prefix: Expr, shift: number): Expr => sub(shl(prefix, shift), 1);
    b.if(
      eq(remaining, count1),
      (x) => x.assign(threshold, lowest(bin1, 32 - DIGIT1)),
      (x) => {
        x.comment(`pass 2: histogram of the next ${DIGIT2} bits over the keys in bin1`);
        this.emitPass(x, ctx, {
          name: 'bin2',
          bins: 2 ** DIGIT2,
          remaining,
          first: false,
          add: (y) =>
            this.emitVotedAdds(
              y,
              ctx,
              (key) => eq(shr(key, 32 - DIGIT1), bin1),
              (key) => bitAnd(shr(key, DIGIT3), 2 ** DIGIT2 - 1),
            ),
        });
        const count2 = read(x, 'count2', DSA_TOPK_STATE.count);
        x.assign(remaining, sub(remaining, read(x, 'above2', DSA_TOPK_STATE.above)));
        const prefix = x.let('prefix', uint32, bitOr(shl(bin1, DIGIT2), cast(read(x, 'bin2', DSA_TOPK_STATE.bin), uint32)));
        x.if(
          eq(remaining, count2),
          (y) => y.assign(threshold, lowest(prefix, DIGIT3)),
          (y) => {
            y.comment(`pass 3: histogram of the last ${DIGIT3} bits over the keys with the ${32 - DIGIT3}-bit prefix`);
            this.emitPass(y, ctx, {
              name: 'bin3',
              bins: 2 ** DIGIT3,
              remaining,
              first: false,
              add: (z) =>
                this.emitVotedAdds(
                  z,
                  ctx,
                  (key) => eq(shr(key, DIGIT3), prefix),
                  (key) => bitAnd(key, 2 ** DIGIT3 - 1),
                ),
            });
            emitDsaTopkThresholdKey(y, ctx.state, { prefix, remaining, threshold, equalTaken }, '');
          },
        );
      },
    );
  }

  /**
   * The write: this thread's keys above and equal to the threshold as two bit masks (bit i: key i),
   * one block scan of their counts (two 16-bit fields), the CTAs' totals gathered over the cluster;
   * CTA r starts at Σ above + min(Σ equal, equalTaken) over the lower CTAs and keeps max(0,
   * equalTaken − Σ equal of the lower CTAs) of its ties, lowest positions first; each thread then
   * writes its kept positions (set bits, lowest first) through the output hook to consecutive slots.
   */
  private emitWrite(b: BlockBuilder, ctx: CtaContext, threshold: Expr, equalTaken: Expr): void {
    const { site, args } = ctx;
    const C = this.policy.cluster;
    const field = 0xffff;
    b.comment('the write: this CTA places its kept keys after the lower CTAs of the cluster, in position order');
    const mask = (name: string, bit: (key: Expr) => Expr): Expr =>
      b.let(
        name,
        uint32,
        ctx.keys.map((key, i) => shl(cast(bit(key), uint32), i)).reduce((s, x) => bitOr(s, x)),
      );
    const aboveMask = mask('above_mask', (key) => gt(key, threshold));
    const equalMask = mask('equal_mask', (key) => eq(key, threshold));
    const counts = b.let('counts', int32, add(popc(aboveMask), shl(popc(equalMask), 16)));
    const scan = emitBlockExclusiveScan(b, site, 'order', counts);
    const aboveBefore = b.var('above_before', int32, 0);
    const equalBefore = b.var('equal_before', int32, 0);
    if (C > 1) {
      emitDsaTopkClusterAllGather(b, ctx.cluster, ctx.gathered, cast(scan.total, uint32));
      for (let q = 0; q < C - 1; q++) {
        const word = b.let(`gathered${q}`, int32, select(lt(q, ctx.cluster.rank), cast(index(ctx.gathered, q), int32), 0));
        b.assign(aboveBefore, add(aboveBefore, bitAnd(word, field)));
        b.assign(equalBefore, add(equalBefore, shr(word, 16)));
      }
    }
    const equalMine = b.let('equal_mine', int32, maxOf(sub(equalTaken, equalBefore), 0));
    const equalFirst = b.let('equal_first', int32, shr(scan.exclusive, 16));
    b.comment("this thread's ties kept: the lowest min(equal_mine - equal_first, its ties) set bits of equal_mask");
    const take = b.var('take', int32, minOf(maxOf(sub(equalMine, equalFirst), 0), popc(equalMask)));
    const rest = b.var('rest', uint32, equalMask);
    b.while(gt(take, 0), (x) => {
      x.assign(rest, bitAnd(rest, sub(rest, 1)));
      x.assign(take, sub(take, 1));
    });
    const kept = b.var('kept', uint32, bitOr(aboveMask, bitXor(equalMask, rest)));
    const out = emitDsaTopkOutRow(b, 'out_row', args, ctx.rowIndex);
    const slot = b.var(
      'slot',
      int32,
      add(add(aboveBefore, minOf(equalBefore, equalTaken)), add(bitAnd(scan.exclusive, field), minOf(equalFirst, equalMine))),
    );
    const position = b.let('position', int32, add(ctx.start, ctx.first));
    b.while(ne(kept, 0), (x) => {
      const pos = x.let('pos', int32, add(position, sub(call('__ffs', [kept], int32, { pure: true }), 1)));
      x.assign(index(out, slot), this.policy.output.emitValue(x, args, ctx.rowIndex, pos));
      x.assign(slot, add(slot, 1));
      x.assign(kept, bitAnd(kept, sub(kept, 1)));
    });
  }
}
