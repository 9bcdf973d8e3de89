// The two-read schedule of the top-k kernel on the CPU (DsaTopkTwoReadInstance's TS twin), pass
// for pass: pass 1 as dsaRadixSelectPlan; when the row narrows, pass 1's bin is not taken whole and
// the keys from that bin up fit the list, pass 2 lists them with their positions in position order
// and histograms the next digit of the bin's keys, pass 3 reads the list, and the ordered compaction
// runs over the list; otherwise it is dsaRadixSelectPlan's schedule. It counts the row reads.
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';
import {
  DSA_TOPK_DIGIT_BITS,
  dsaRadixSelectPlan,
  dsaRadixSelectPositions,
  dsaThresholdBin,
  dsaTopkRowKeys,
  type DsaRadixSelectPlan,
} from './dsaRadixSelectPlan.ts';

/** What the two-read schedule decides for one row. */
export interface DsaRadixSelectTwoReadPlan {
  /** The threshold and equalTaken the compaction keeps by (as dsaRadixSelectPlan's). */
  readonly plan: DsaRadixSelectPlan;
  /** The position-ordered list pass 2 built (positions and keys of every key from pass 1's bin up), or undefined when the schedule fell back. */
  readonly list?: { readonly positions: readonly number[]; readonly keys: readonly number[] };
  /**
   * Why it took the path: 'list' (two reads), 'decided' (pass 1 decides: at most k candidates or
   * its bin taken whole; two reads), 'overflow' (the keys from pass 1's bin up do not fit: three
   * reads, or four when pass 3 re-scans the row).
   */
  readonly path: 'list' | 'decided' | 'overflow';
  /** Times the kernel reads the row from global memory. */
  readonly rowReads: number;
}

const DIGIT1 = DSA_TOPK_DIGIT_BITS[0]!;
const DIGIT2 = DSA_TOPK_DIGIT_BITS[1]!;
const DIGIT3 = DSA_TOPK_DIGIT_BITS[2]!;

/** Histogram of the digit `(key >>> shift) & (2^bits − 1)` over the keys whose bits above the digit equal `prefix`. */
function histogram(keys: readonly number[], shift: number, bits: number, prefix: number): Uint32Array {
  const h = new Uint32Array(2 ** bits);
  for (const key of keys) if (key !== 0 && Math.floor(key / 2 ** (shift + bits)) === prefix) h[(key >>> shift) & (2 ** bits - 1)]!++;
  return h;
}

/**
 * The two-read schedule's passes over one row's keys with a list of `listCapacity` (position, key)
 * entries. Postcondition (property-tested): its positions (dsaRadixSelectTwoReadPositions) equal
 * dsaTopkReference's; path 'list' reads the row twice.
 */
export function dsaRadixSelectTwoReadPlan(keys: ArrayLike<number>, k: number, listCapacity: number): DsaRadixSelectTwoReadPlan {
  const row = Array.from(keys);
  const h1 = histogram(row, 32 - DIGIT1, DIGIT1, 0);
  const candidates = h1.reduce((s, c) => s + c, 0);
  const t1 = candidates > k ? dsaThresholdBin(h1, k) : undefined;
  if (t1 === undefined || k - t1.above === t1.count)
    return { plan: dsaRadixSelectPlan(keys, k, listCapacity), path: 'decided', rowReads: 2 };
  if (t1.above + t1.count > listCapacity) {
    const plan = dsaRadixSelectPlan(keys, k, listCapacity);
    return { plan, path: 'overflow', rowReads: plan.passes === 3 && !plan.listed ? 4 : 3 };
  }
  // Pass 2: one sweep in position order lists every key whose top digit is ≥ bin1 (keys above bin1 are kept for certain).
  const positions: number[] = [];
  const listKeys: number[] = [];
  row.forEach((key, p) => {
    if (key !== 0 && key >>> (32 - DIGIT1) >= t1.bin) {
      positions.push(p);
      listKeys.push(key);
    }
  });
  if (positions.length !== t1.above + t1.count) throw new Error(`listed ${positions.length}, expected ${t1.above + t1.count}`);
  const list = { positions, keys: listKeys };
  let remaining = k - t1.above;
  const t2 = dsaThresholdBin(histogram(listKeys, DIGIT3, DIGIT2, t1.bin), remaining);
  remaining -= t2.above;
  const prefix = t1.bin * 2 ** DIGIT2 + t2.bin;
  const base = { candidates, selected: k, listed: true };
  if (remaining === t2.count)
    return { plan: { ...base, threshold: prefix * 2 ** DIGIT3 - 1, equalTaken: 0, passes: 2 }, list, path: 'list', rowReads: 2 };
  const t3 = dsaThresholdBin(histogram(listKeys, 0, DIGIT3, prefix), remaining);
  const key = prefix * 2 ** DIGIT3 + t3.bin;
  const taken = remaining - t3.above;
  const whole = taken === t3.count;
  const plan = { ...base, threshold: whole ? key - 1 : key, equalTaken: whole ? 0 : taken, passes: 3 };
  return { plan, list, path: 'list', rowReads: 2 };
}

/** The kept positions of one row, ascending: the ordered compaction over the list, or over the row when the schedule fell back. */
export function dsaRadixSelectTwoReadPositions(keys: ArrayLike<number>, s: DsaRadixSelectTwoReadPlan): number[] {
  if (s.list === undefined) return dsaRadixSelectPositions(keys, s.plan);
  const list = s.list;
  return dsaRadixSelectPositions(list.keys, s.plan).map((i) => list.positions[i]!);
}

/** The two-read kernel's selection of every row on the CPU ([rows][k] int32, −1 padded), as dsaTopkReference lays it out. */
export function dsaRadixSelectTwoRead(input: DsaTopkRows, listCapacity: number): Int32Array {
  const { logits, rows, rowStride, k } = input;
  const out = new Int32Array(rows * k).fill(-1);
  for (let r = 0; r < rows; r++) {
    const length = input.lengths === undefined ? rowStride : Math.max(0, Math.min(rowStride, input.lengths[r]!));
    const keys = dsaTopkRowKeys(logits, r * rowStride, length);
    out.set(dsaRadixSelectTwoReadPositions(keys, dsaRadixSelectTwoReadPlan(keys, k, listCapacity)), r * k);
  }
  return out;
}
