// The exact top-k selection kernel (DeepSeek sparse attention's indexer top-k): one CTA per row, a
// radix select over the 32-bit keys of the logits (digits 12/10/10, histograms in shared memory),
// then an ordered compaction that writes the kept positions ascending through the output hook.
// dsaRadixSelectPlan is its TS twin, pass for pass.
import {
  add,
  bitAnd,
  bitNot,
  bitOr,
  call,
  cast,
  declareAlignedDynamicShared,
  eq,
  float32,
  ge,
  gt,
  index,
  int32,
  int64,
  KernelInstance,
  le,
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
import { DSA_TOPK_MIN_CANDIDATE_KEY } from './dsaTopkKey.ts';
import { emitDsaTopkListAppend, type DsaTopkCandidateList } from './dsaTopkCandidateList.ts';
import { emitDsaTopkRowSweep, type DsaTopkRow, type DsaTopkVector } from './dsaTopkRowSweep.ts';
import { DSA_TOPK_STATE, DSA_TOPK_STATE_SLOTS, emitDsaTopkThresholdBin } from './dsaTopkThresholdBin.ts';
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

// Moved to dsaTopkInstanceParts.ts (shared with the cluster kernel); still importable from here.
export { dsaTopkKernelParams, emitDsaTopkZero, type DsaTopkLaunch } from './dsaTopkInstanceParts.ts';

/** Threads per CTA an instance may take. */
export const DSA_TOPK_THREADS: readonly number[] = Object.freeze([512, 1024]);

/** Positions per thread and chunk an instance may load: 4 (16-byte loads; rowStride % 4 = 0 and 16-byte aligned logits) or 1. */
export const DSA_TOPK_VECTORS: readonly DsaTopkVector[] = Object.freeze([1, 4]);

/** Chunks per thread and tile an instance may take (loads in flight per thread). */
export const DSA_TOPK_UNROLLS: readonly number[] = Object.freeze([1, 2, 4, 8]);

/** The largest row stride the kernel serves (positions are int32 and tiles step past the length). */
export const DSA_TOPK_MAX_ROW_STRIDE = 2 ** 30;

const [DIGIT1, DIGIT2, DIGIT3] = DSA_TOPK_DIGIT_BITS as [number, number, number];
/** Two scan scratches of 32 words (back-to-back scans alternate). */
const SCRATCH_WORDS = 64;

/**
 * The Policy of one top-k instance: threads one of DSA_TOPK_THREADS, vector one of DSA_TOPK_VECTORS, unroll (chunks per
 * thread and tile) one of DSA_TOPK_UNROLLS.
 */
export interface DsaTopkPolicy extends DsaTopkCtaPolicy {
  /** Keys the shared candidate list holds (a multiple of 1024, 1024 … 32768): pass 3 reads it instead of the row when pass 1's bin fits. */
  readonly listCapacity: number;
}

/** What a subclass of DsaTopkInstance changes: the name of its instance key and the shared bytes it adds past the candidate list. */
export interface DsaTopkSchedule {
  readonly name: string;
  readonly extraSharedBytes: number;
}

/** Byte offsets of the shared memory, from its aligned start: histogram | scan scratch | state | candidate list. */
export function dsaTopkSharedLayout(listCapacity: number): {
  readonly scratch: number;
  readonly state: number;
  readonly list: number;
  readonly bytes: number;
} {
  const scratch = (DSA_TOPK_HIST_BINS + DSA_TOPK_SPARE_BINS) * 4;
  const state = scratch + SCRATCH_WORDS * 4;
  const list = state + DSA_TOPK_STATE_SLOTS * 4;
  return { scratch, state, list, bytes: DSA_TOPK_SMEM_ALIGN + list + listCapacity * 4 };
}

function checkPolicy(policy: DsaTopkPolicy): void {
  dsaTopkCheckOneOf('policy.threads', DSA_TOPK_THREADS, policy.threads);
  dsaTopkCheckOneOf('policy.vector', DSA_TOPK_VECTORS, policy.vector);
  dsaTopkCheckOneOf('policy.unroll', DSA_TOPK_UNROLLS, policy.unroll);
  const c = policy.listCapacity;
  if (!Number.isSafeInteger(c) || c < 1024 || c > 32768 || c % 1024 !== 0)
    throw new DsaArgumentError('policy.listCapacity', 'must be a multiple of 1024 in [1024, 32768]', c);
  dsaTopkCheckOutput(policy.output);
}

/** The emitted kernel's view of one row and its shared memory (what a subclass's schedule gets). */
export interface DsaTopkRowContext {
  readonly b: BlockBuilder;
  readonly args: Readonly<Record<string, Expr>>;
  readonly row: DsaTopkRow;
  readonly site: BlockScanSite;
  readonly rowIndex: Expr;
  readonly lane: Expr;
  readonly hist: Expr;
  readonly state: Expr;
  readonly list: DsaTopkCandidateList;
}

type RowContext = DsaTopkRowContext;

/**
 * One top-k instance (sm_90a). For row r (one CTA) of fp32 logits [rows][row_stride] and its length
 * (lengths[r] clamped to [0, row_stride], or row_stride when `lengths` is null) it writes
 * out[r][0, k): the kept positions ascending through the output hook, then −1. Kept: the k
 * largest candidates (neither −∞ nor NaN; −0 = +0), ties to the lower position — all of them when
 * there are at most k. Passes: (1) a 4096-bin histogram of the keys' top 12 bits over the row; (2)
 * a 1024-bin histogram of the next 10 bits over the row's keys in pass 1's threshold bin, which
 * are also listed in shared memory; (3) the last 10 bits over the list (or the row when the bin
 * overflowed the list); a pass whose threshold bin is taken whole ends the search; then the
 * ordered compaction (tiles of threads × unroll × vector positions, one block scan each; a float
 * compare per logit unless the threshold's ties straddle k). Postcondition (GPU spec): equal to
 * dsaTopkReference, in the output hook's form.
 * @throws DsaArgumentError for a policy outside DSA_TOPK_THREADS, DSA_TOPK_VECTORS, DSA_TOPK_UNROLLS, the list capacities or the output hooks.
 */
export class DsaTopkInstance extends KernelInstance<DsaTopkPolicy, KernelParams> {
  protected readonly sourceHeader = { title: 'dsa exact top-k selection', generator: '@tilekit/kernel-dsa' };

  /** `schedule` is for subclasses that run another schedule of the same steps (their key's name and the shared memory they add). */
  constructor(policy: DsaTopkPolicy, target: Target = sm90a, schedule: DsaTopkSchedule = { name: 'dsa_topk', extraSharedBytes: 0 }) {
    checkPolicy(policy);
    super(
      dsaTopkInstanceSpec(policy, target, {
        family: schedule.name,
        before: [],
        after: [['list', 'l', policy.listCapacity]],
        maxRowStride: DSA_TOPK_MAX_ROW_STRIDE,
        sharedBytes: dsaTopkSharedLayout(policy.listCapacity).bytes + schedule.extraSharedBytes,
      }),
    );
  }

  /** The launch for `rows` rows. */
  launch(rows: number): DsaTopkLaunch {
    return { grid: [rows, 1, 1], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const T = this.threads;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: T, minBlocksPerSm: 1 } }, (b, params) => {
      const a = params as Readonly<Record<string, Expr>>;
      const { tid, lane } = emitDsaTopkThreadIds(b, t, T);
      const rowIndex = b.let('row', int32, cast(t.blockIdx('x'), int32));
      const offset = mul(cast(rowIndex, int64), cast(a['row_stride']!, int64));
      const logits = b.let('row_logits', pointer(float32, { const: true }), add(a['logits']!, offset));
      const length = emitDsaTopkRowLength(b, a, rowIndex);
      b.comment(
        'dynamic shared memory: histogram int32[4096 + 32 spare] | scan scratches int32[2][32] | state int32[4] | candidate list uint32[capacity]',
      );
      const layout = dsaTopkSharedLayout(this.policy.listCapacity);
      const { smem } = declareAlignedDynamicShared(b, t, 'dsa_topk_smem', DSA_TOPK_SMEM_ALIGN);
      const hist = b.let('hist', pointer(int32), cast(smem, pointer(int32)));
      const scratch = b.let('scratch', pointer(int32), cast(add(smem, layout.scratch), pointer(int32)));
      const state = b.let('state', pointer(int32), cast(add(smem, layout.state), pointer(int32)));
      const keys = b.let('list', pointer(uint32), cast(add(smem, layout.list), pointer(uint32)));
      const ctx: RowContext = {
        b,
        args: a,
        row: { target: t, threads: T, vector: this.policy.vector, unroll: this.policy.unroll, tid, logits, length },
        site: { target: t, threads: T, tid, scratch },
        rowIndex,
        lane,
        hist,
        state,
        list: { keys, counter: add(state, DSA_TOPK_STATE.listed), capacity: this.policy.listCapacity },
      };
      this.emitSelection(ctx);
    });
  }

  /** Pass 1, the narrowing passes when the row has more than k candidates, the compaction and the padding. */
  protected emitSelection(ctx: RowContext): void {
    const { b, site, hist, state, args } = ctx;
    const k = args['k']!;
    emitDsaTopkZero(b, site, hist, DSA_TOPK_HIST_BINS);
    b.if(eq(site.tid, 0), (x) => x.assign(index(state, DSA_TOPK_STATE.listed), 0));
    b.push(site.target.syncThreads());
    b.comment(`pass 1: histogram of the top ${DIGIT1} bits of every candidate's key`);
    emitDsaTopkRowSweep(b, ctx.row, (x, chunks) => {
      for (const c of chunks) emitDsaTopkPass1Adds(x, hist, c.keys, ctx.lane);
    });
    b.push(site.target.syncThreads());
    const candidates = b.let(
      'candidates',
      int32,
      emitDsaTopkThresholdBin(b, site, 'bin1', { hist, bins: DSA_TOPK_HIST_BINS, remaining: k, state }),
    );
    const { threshold, equalTaken, selected } = emitDsaTopkNarrowingIf(b, candidates, k, (x, th, eqTaken) =>
      this.emitNarrowing({ ...ctx, b: x }, th, eqTaken),
    );
    this.emitCompaction(ctx, threshold, equalTaken, selected);
    emitDsaTopkPadding(b, args, ctx.rowIndex, { from: add(selected, site.tid), step: site.threads }, '');
  }

  /** Passes 2 and 3 (each stopping early when its threshold bin is taken whole): sets the threshold and equalTaken. */
  protected emitNarrowing(ctx: RowContext, threshold: Expr, equalTaken: Expr): void {
    const { b, site, hist, state } = ctx;
    const read = (x: BlockBuilder, name: string, slot: number): Expr => x.let(name, int32, index(state, slot));
    const bin1 = read(b, 'bin1', DSA_TOPK_STATE.bin);
    const count1 = read(b, 'count1', DSA_TOPK_STATE.count);
    const remaining = b.var('remaining', int32, sub(ctx.args['k']!, read(b, 'above1', DSA_TOPK_STATE.above)));
    const bin1u = b.let('bin1_u', uint32, cast(bin1, uint32));
    const lowest = (prefix: Expr, shift: number): Expr => sub(shl(prefix, shift), 1);
    b.if(
      eq(remaining, count1),
      (x) => x.assign(threshold, lowest(bin1u, 32 - DIGIT1)),
      (x) => {
        x.comment(`pass 2: histogram of the next ${DIGIT2} bits over the keys in bin1, which are listed too`);
        emitDsaTopkZero(x, site, hist, 2 ** DIGIT2);
        x.push(site.target.syncThreads());
        const pass2 = {
          inBin: (key: Expr) => eq(shr(key, 32 - DIGIT1), bin1u),
          digit: (key: Expr) => bitAnd(shr(key, DIGIT3), 2 ** DIGIT2 - 1),
        };
        emitDsaTopkRowSweep(x, ctx.row, (y, chunks) => {
          for (const c of chunks)
            emitDsaTopkVotedAdds(y, { target: site.target, hist, lane: ctx.lane }, c.keys, 'in_bin1', pass2, (z, inBin) =>
              c.keys.forEach((key, j) => emitDsaTopkListAppend(z, site.target, ctx.list, inBin[j]!, key, ctx.lane)),
            );
        });
        x.push(site.target.syncThreads());
        emitDsaTopkThresholdBin(x, site, 'bin2', { hist, bins: 2 ** DIGIT2, remaining, state });
        const count2 = read(x, 'count2', DSA_TOPK_STATE.count);
        x.assign(remaining, sub(remaining, read(x, 'above2', DSA_TOPK_STATE.above)));
        const prefix = x.let('prefix', uint32, bitOr(shl(bin1u, DIGIT2), cast(read(x, 'bin2', DSA_TOPK_STATE.bin), uint32)));
        x.if(
          eq(remaining, count2),
          (y) => y.assign(threshold, lowest(prefix, DIGIT3)),
          (y) => this.emitLastPass({ ...ctx, b: y }, { prefix, count1, remaining, threshold, equalTaken }),
        );
      },
    );
  }

  /** Pass 3: the last digit over the list (or the row when bin1 overflowed it); the threshold is then one key. */
  protected emitLastPass(
    ctx: RowContext,
    v: { readonly prefix: Expr; readonly count1: Expr; readonly remaining: Expr; readonly threshold: Expr; readonly equalTaken: Expr },
  ): void {
    const { b, site, hist, state, list } = ctx;
    b.comment(`pass 3: histogram of the last ${DIGIT3} bits over the keys with the ${32 - DIGIT3}-bit prefix`);
    emitDsaTopkZero(b, site, hist, 2 ** DIGIT3);
    b.push(site.target.syncThreads());
    const pass3 = { inBin: (key: Expr) => eq(shr(key, DIGIT3), v.prefix), digit: (key: Expr) => bitAnd(key, 2 ** DIGIT3 - 1) };
    const add3 = (x: BlockBuilder, keys: readonly Expr[]): void =>
      emitDsaTopkVotedAdds(x, { target: site.target, hist, lane: ctx.lane }, keys, 'in_prefix', pass3);
    b.if(
      le(v.count1, list.capacity),
      (x) =>
        x.forRange({ name: 'base', to: v.count1, step: site.threads }, (y, base) => {
          const i = y.let('i', int32, add(base, site.tid));
          const key = y.let('listed_key', uint32, select(lt(i, v.count1), index(list.keys, i), 0));
          add3(y, [key]);
        }),
      (x) =>
        emitDsaTopkRowSweep(x, ctx.row, (y, chunks) => {
          for (const c of chunks) add3(y, c.keys);
        }),
    );
    b.push(site.target.syncThreads());
    emitDsaTopkThresholdBin(b, site, 'bin3', { hist, bins: 2 ** DIGIT3, remaining: v.remaining, state });
    emitDsaTopkThresholdKey(b, state, v, ' (one flag in the compaction)');
  }

  /**
   * The ordered compaction: kept keys go through the output hook to their slots in position order,
   * one block scan per tile placing them (two scratches alternating between tiles), until
   * `selected` are written. With equalTaken = 0 a key is kept when above the threshold (one flag);
   * otherwise keys above it and the first equalTaken equal to it are (two 16-bit counts).
   */
  protected emitCompaction(ctx: RowContext, threshold: Expr, equalTaken: Expr, selected: Expr): void {
    const { b, args } = ctx;
    b.comment('ordered compaction: kept keys in position order through the output hook');
    const out = emitDsaTopkOutRow(b, 'out_row', args, ctx.rowIndex);
    const sweep = { out, threshold, equalTaken, selected };
    b.if(
      eq(equalTaken, 0),
      (x) => this.emitCompactionSweep({ ...ctx, b: x }, sweep, false),
      (x) => this.emitCompactionSweep({ ...ctx, b: x }, sweep, true),
    );
  }

  /** One compaction sweep: `ties` counts the keys equal to the threshold too (the first equalTaken of them are kept). */
  private emitCompactionSweep(
    ctx: RowContext,
    v: { readonly out: Expr; readonly threshold: Expr; readonly equalTaken: Expr; readonly selected: Expr },
    ties: boolean,
  ): void {
    const { b, site, args } = ctx;
    const keptAbove = b.var('kept_above', int32, 0);
    const equal = b.var('kept_equal', int32, 0);
    const written = b.var('written', int32, 0);
    const parity = b.var('parity', int32, 0);
    const field = 0xffff;
    // Without ties, key > threshold ⇔ value ≥ the value of key threshold + 1 (at least −FLT_MAX's):
    // one float compare, false for NaN and −∞ too.
    const lowest = b.let('kept_key', uint32, maxOf(add(v.threshold, 1), DSA_TOPK_MIN_CANDIDATE_KEY));
    const lowestBits = select(ne(bitAnd(lowest, 0x8000_0000), 0), bitAnd(lowest, 0x7fff_ffff), bitNot(lowest));
    const floor = b.let('kept_value', float32, call('__uint_as_float', [lowestBits], float32, { pure: true }));
    emitDsaTopkRowSweep(
      b,
      ctx.row,
      (x, chunks) => {
        const items = chunks.flatMap((c) => c.keys.map((key, j) => ({ key, value: c.values[j]!, pos: add(c.first, j) })));
        const above = (key: Expr, value: Expr): Expr => (ties ? gt(key, v.threshold) : ge(value, floor));
        const isAbove = items.map(({ key, value }, i) => x.let(`above${i}`, int32, select(above(key, value), 1, 0)));
        const isEqual = ties ? items.map(({ key }, i) => x.let(`equal${i}`, int32, select(eq(key, v.threshold), 1, 0))) : [];
        const counts = items.map((_, i) => (ties ? add(isAbove[i]!, shl(isEqual[i]!, 16)) : isAbove[i]!));
        const scratch = add(site.scratch, mul(parity, 32));
        const scan = emitBlockExclusiveScan(
          x,
          { ...site, scratch },
          'order',
          x.let(
            'flags',
            int32,
            counts.reduce((s, c) => add(s, c)),
          ),
        );
        const a = x.var('a', int32, add(keptAbove, ties ? bitAnd(scan.exclusive, field) : scan.exclusive));
        const e = ties ? x.var('e', int32, add(equal, shr(scan.exclusive, 16))) : null;
        items.forEach(({ pos }, i) => {
          const kept = e === null ? isAbove[i]! : bitOr(isAbove[i]!, bitAnd(isEqual[i]!, cast(lt(e, v.equalTaken), int32)));
          const slot = e === null ? a : add(a, minOf(e, v.equalTaken));
          x.if(ne(kept, 0), (y) => y.assign(index(v.out, slot), this.policy.output.emitValue(y, args, ctx.rowIndex, pos)));
          x.assign(a, add(a, isAbove[i]!));
          if (e !== null) x.assign(e, add(e, isEqual[i]!));
        });
        x.assign(keptAbove, add(keptAbove, ties ? bitAnd(scan.total, field) : scan.total));
        if (ties) x.assign(equal, add(equal, shr(scan.total, 16)));
        x.assign(written, ties ? add(keptAbove, minOf(equal, v.equalTaken)) : keptAbove);
        x.assign(parity, sub(1, parity));
      },
      lt(written, v.selected),
    );
  }
}
