// The two-read schedule of the single-CTA top-k kernel, for long rows that do not stay in L2: the
// same steps as DsaTopkInstance (row sweep, histogram adds, threshold search, block scan, output
// hook), scheduled so the row is read from global memory twice instead of three times. Pass 1 as
// there; pass 2 re-reads the row once, from its end (whose logits pass 1 read last, so many are
// still in L2), and lists, in position order, every key whose top digit is at least pass 1's
// threshold bin (those above it are kept for certain) with its position; every later pass and
// the ordered compaction run on that list. A row whose list would not fit takes DsaTopkInstance's
// three-read schedule. dsaRadixSelectTwoRead is its TS twin.
import {
  add,
  and,
  bool,
  cast,
  eq,
  ge,
  gt,
  index,
  int32,
  int64,
  le,
  lit,
  lt,
  minOf,
  mul,
  ne,
  or,
  pointer,
  shl,
  shr,
  bitAnd,
  bitOr,
  sm90a,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_DIGIT_BITS } from './dsaRadixSelectPlan.ts';
import { emitDsaTopkHistogramAdd } from './dsaTopkHistogram.ts';
import { DsaTopkInstance, emitDsaTopkZero, type DsaTopkPolicy, type DsaTopkRowContext } from './dsaTopkInstance.ts';
import { emitDsaTopkListCompaction, emitDsaTopkOrderedPrepend, type DsaTopkOrderedList } from './dsaTopkOrderedList.ts';
import { emitDsaTopkRowSweep, emitDsaTopkRowSweepBackward } from './dsaTopkRowSweep.ts';
import { DSA_TOPK_STATE, emitDsaTopkThresholdBin } from './dsaTopkThresholdBin.ts';

const [DIGIT1, DIGIT2, DIGIT3] = DSA_TOPK_DIGIT_BITS as [number, number, number];
const HIST_BINS = 2 ** DIGIT1;

/** The largest list a two-read instance may take: its (position, key) entries and the keys of DsaTopkInstance fit the 227 KiB of an sm_90 CTA. */
export const DSA_TOPK_TWO_READ_MAX_LIST = 24576;

/** List entries each thread reads per tile of the final compaction over the list. */
const LIST_PER_THREAD = 4;

/**
 * The single-CTA top-k kernel with the two-read schedule (sm_90a): the contract of DsaTopkInstance
 * (same parameters, launch and output), its shared memory plus listCapacity int32 positions after
 * the key list, so that the list holds listCapacity (position, key) entries. For a row of more than
 * k candidates whose pass-1 threshold bin T1 is not taken whole, with A1 keys above T1: when A1 +
 * |T1| ≤ listCapacity, pass 2 reads the row a second (and last) time, its tiles from the row's end
 * down, builds the next digit's histogram over T1's keys and places every key of top digit ≥ T1 with
 * its position into the list in position order, down from slot A1 + |T1| (one block scan per tile, no
 * atomics; the sweep stops once all A1 + |T1| are listed); pass 3 reads the list, and the ordered compaction runs over the list. Otherwise (rows of
 * at most k candidates, T1 taken whole, or A1 + |T1| past the capacity, e.g. all-equal rows) it runs
 * DsaTopkInstance's schedule (three reads when narrowing). Postcondition (GPU spec): equal
 * to dsaTopkReference, in the output hook's form.
 *
 * packDsaTopk dispatches it where dsaTopkPrefersTwoRead holds (long rows in large launches).
 * @throws DsaArgumentError for a policy DsaTopkInstance rejects, or a list past DSA_TOPK_TWO_READ_MAX_LIST.
 */
export class DsaTopkTwoReadInstance extends DsaTopkInstance {
  constructor(policy: DsaTopkPolicy, target: Target = sm90a) {
    if (policy?.listCapacity > DSA_TOPK_TWO_READ_MAX_LIST)
      throw new DsaArgumentError(
        'policy.listCapacity',
        `must be at most ${DSA_TOPK_TWO_READ_MAX_LIST} for the two-read schedule`,
        policy.listCapacity,
      );
    super(policy, target, { name: 'dsa_topk_2r', extraSharedBytes: policy.listCapacity * 4 });
  }

  /** Pass 1; the two-read schedule when the row's list fits, else DsaTopkInstance's narrowing and row compaction; the padding. */
  protected override emitSelection(ctx: DsaTopkRowContext): void {
    const { b, site, hist, state, args } = ctx;
    const k = args['k']!;
    emitDsaTopkZero(b, site, hist, HIST_BINS);
    b.if(eq(site.tid, 0), (x) => x.assign(index(state, DSA_TOPK_STATE.listed), 0));
    b.push(site.target.syncThreads());
    b.comment(`pass 1: histogram of the top ${DIGIT1} bits of every candidate's key`);
    emitDsaTopkRowSweep(b, ctx.row, (x, chunks) => {
      for (const c of chunks) {
        const items = c.keys.map((key) => ({ active: gt(key, 0), bin: shr(key, 32 - DIGIT1) }));
        emitDsaTopkHistogramAdd(x, hist, HIST_BINS, items, ctx.lane);
      }
    });
    b.push(site.target.syncThreads());
    const candidates = b.let('candidates', int32, emitDsaTopkThresholdBin(b, site, 'bin1', { hist, bins: HIST_BINS, remaining: k, state }));
    const threshold = b.var('threshold', uint32, cast(0, uint32));
    const equalTaken = b.var('equal_taken', int32, 0);
    const selected = b.let('selected', int32, minOf(candidates, k));
    const listedCount = b.var('list_count', int32, 0);
    b.comment('two reads when pass 1 narrows, its bin is not taken whole, and the keys from its bin up fit the list');
    b.if(gt(candidates, k), (x) => {
      const above1 = x.let('above1', int32, index(state, DSA_TOPK_STATE.above));
      const count1 = x.let('count1', int32, index(state, DSA_TOPK_STATE.count));
      const fits = and(le(add(above1, count1), ctx.list.capacity), ne(sub(k, above1), count1));
      x.if(fits, (y) => y.assign(listedCount, add(above1, count1)));
    });
    b.if(
      gt(listedCount, 0),
      (x) => this.emitTwoRead({ ...ctx, b: x }, listedCount, threshold, equalTaken, selected),
      (x) => {
        x.comment('three reads (or two when pass 1 decides): DsaTopkInstance schedule');
        x.if(gt(candidates, k), (y) => this.emitNarrowing({ ...ctx, b: y }, threshold, equalTaken));
        this.emitCompaction({ ...ctx, b: x }, threshold, equalTaken, selected);
      },
    );
    b.comment('padding: the slots past the kept positions hold -1');
    const outRow = b.let('pad_row', pointer(int32), add(args['out']!, mul(cast(ctx.rowIndex, int64), cast(k, int64))));
    b.forRange({ name: 's', from: add(selected, site.tid), to: k, step: site.threads }, (x, s) => x.assign(index(outRow, s), -1));
  }

  /** The list this schedule keeps: the key list of DsaTopkInstance, then as many int32 positions. */
  private orderedList(ctx: DsaTopkRowContext): DsaTopkOrderedList {
    const positions = ctx.b.let('list_pos', pointer(int32), cast(add(ctx.list.keys, ctx.list.capacity), pointer(int32)));
    return { keys: ctx.list.keys, positions, capacity: ctx.list.capacity };
  }

  /** Pass 2 (the second and last row read: histogram and position-ordered list), pass 3 on the list, and the compaction over the list. */
  private emitTwoRead(ctx: DsaTopkRowContext, count: Expr, threshold: Expr, equalTaken: Expr, selected: Expr): void {
    const { b, site, hist, state } = ctx;
    const read = (x: BlockBuilder, name: string, slot: number): Expr => x.let(name, int32, index(state, slot));
    const list = this.orderedList(ctx);
    const bin1u = b.let('bin1_u', uint32, cast(read(b, 'bin1', DSA_TOPK_STATE.bin), uint32));
    const remaining = b.var('remaining', int32, sub(ctx.args['k']!, read(b, 'above1', DSA_TOPK_STATE.above)));
    b.comment(
      `pass 2, from the row's end (its tail is likely still in L2): histogram of the next ${DIGIT2} bits over bin1; ` +
        'every key from bin1 up listed with its position, in position order (placed down from the top of the list)',
    );
    emitDsaTopkZero(b, site, hist, 2 ** DIGIT2);
    b.push(site.target.syncThreads());
    const listed = b.var('listed', int32, 0);
    const parity = b.var('parity', int32, 0);
    emitDsaTopkRowSweepBackward(
      b,
      ctx.row,
      (x, chunks) => {
        const items = chunks.flatMap((c) => c.keys.map((key, j) => ({ key, pos: add(c.first, j) })));
        const digits = items.map(({ key }, i) => x.let(`digit${i}`, uint32, shr(key, 32 - DIGIT1)));
        const inBin = digits.map((d) => x.let('in_bin1', bool, eq(d, bin1u)));
        x.if(site.target.any(inBin.reduce<Expr>((s, f) => or(s, f), lit(false))), (y) => {
          const adds = items.map(({ key }, i) => ({ active: inBin[i]!, bin: bitAnd(shr(key, DIGIT3), 2 ** DIGIT2 - 1) }));
          emitDsaTopkHistogramAdd(y, hist, HIST_BINS, adds, ctx.lane);
        });
        const offered = items.map(({ key, pos }, i) => ({ active: x.let('from_bin1', bool, ge(digits[i]!, bin1u)), key, pos }));
        emitDsaTopkOrderedPrepend(x, { ...site, scratch: add(site.scratch, mul(parity, 32)) }, { ...list, size: count }, listed, offered);
        x.assign(parity, sub(1, parity));
      },
      lt(listed, count),
    );
    b.push(site.target.syncThreads());
    emitDsaTopkThresholdBin(b, site, 'bin2', { hist, bins: 2 ** DIGIT2, remaining, state });
    const count2 = read(b, 'count2', DSA_TOPK_STATE.count);
    b.assign(remaining, sub(remaining, read(b, 'above2', DSA_TOPK_STATE.above)));
    const prefix = b.let('prefix', uint32, bitOr(shl(bin1u, DIGIT2), cast(read(b, 'bin2', DSA_TOPK_STATE.bin), uint32)));
    b.if(
      eq(remaining, count2),
      (x) => x.assign(threshold, sub(shl(prefix, DIGIT3), 1)),
      // count ≤ the capacity: emitLastPass reads the list (its keys of the prefix are those of bin1's) and never the row.
      (x) => this.emitLastPass({ ...ctx, b: x }, { prefix, count1: count, remaining, threshold, equalTaken }),
    );
    b.comment('ordered compaction over the list (position order): the row is not read again');
    const out = b.let('out_row', pointer(int32), add(ctx.args['out']!, mul(cast(ctx.rowIndex, int64), cast(ctx.args['k']!, int64))));
    emitDsaTopkListCompaction(b, site, list, { count, threshold, equalTaken, selected, perThread: LIST_PER_THREAD }, (x, slot, pos) =>
      x.assign(index(out, slot), this.policy.output.emitValue(x, ctx.args, ctx.rowIndex, pos)),
    );
  }
}
