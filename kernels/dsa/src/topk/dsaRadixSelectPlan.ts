// The top-k kernel's radix selection on the CPU, pass for pass (its TS twin): histograms of the
// key's digits from the top, the threshold bin of each, the early stop, the shared candidate list
// and its overflow, then the ordered compaction. Property-tested against dsaTopkReference, so the
// pass logic is checked without a GPU; the GPU spec checks that the kernel agrees.
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';
import { dsaTopkKey } from './dsaTopkKey.ts';

/** Bits of the radix digits, most significant first: 12 + 10 + 10 = the 32 bits of a key. */
export const DSA_TOPK_DIGIT_BITS: readonly number[] = Object.freeze([12, 10, 10]);

/** What the radix passes decide for one row: which keys the ordered compaction keeps. */
export interface DsaRadixSelectPlan {
  /** Candidates of the row (keys > 0). */
  readonly candidates: number;
  /** Positions written: min(k, candidates); the row's other slots hold −1. */
  readonly selected: number;
  /** Every key above it is kept (0 when the row has at most k candidates: all are kept). */
  readonly threshold: number;
  /** How many keys equal to `threshold` are kept besides, the lowest positions first (0 when none or, with threshold − 1, all are). */
  readonly equalTaken: number;
  /** Histogram passes run (1 … 3). */
  readonly passes: number;
  /** Whether the last pass read the shared candidate list (false: it re-scanned the row, or there was none). */
  readonly listed: boolean;
}

/** The bin where the count from the top reaches `remaining`, the count above it and its own. */
export interface DsaThresholdBin {
  readonly bin: number;
  readonly above: number;
  readonly count: number;
}

/**
 * The bin b of `histogram` with above(b) < remaining ≤ above(b) + count(b), where above(b) counts
 * the bins over b. Precondition: 1 ≤ remaining ≤ Σ histogram.
 */
export function dsaThresholdBin(histogram: ArrayLike<number>, remaining: number): DsaThresholdBin {
  let above = 0;
  for (let bin = histogram.length - 1; bin >= 0; bin--) {
    const count = histogram[bin]!;
    if (above < remaining && remaining <= above + count) return { bin, above, count };
    above += count;
  }
  throw new RangeError(`no bin reaches ${remaining} (the histogram holds ${above})`);
}

/** The keys (see dsaTopkKey) of a row's first `length` logits, from `base`. */
export function dsaTopkRowKeys(logits: Float32Array, base: number, length: number): Uint32Array {
  return Uint32Array.from({ length }, (_, p) => dsaTopkKey(logits[base + p]!));
}

/** Histogram of the digit `(key >>> shift) & (2^bits − 1)` over the candidate keys whose bits above the digit equal `prefix`. */
function histogram(keys: readonly number[], shift: number, bits: number, prefix: number): Uint32Array {
  const h = new Uint32Array(2 ** bits);
  for (const key of keys) if (key !== 0 && Math.floor(key / 2 ** (shift + bits)) === prefix) h[(key >>> shift) & (2 ** bits - 1)]!++;
  return h;
}

/**
 * The kernel's passes over one row's keys (digits 12/10/10 of DSA_TOPK_DIGIT_BITS): pass 1
 * histograms the top digit of every candidate, and a row of at most k candidates keeps them all.
 * Otherwise each pass finds the threshold bin of the remaining count and stops early when that bin
 * is taken whole (threshold = its lowest key − 1), else narrows the prefix to it. Pass 2 re-scans
 * the row and also lists the keys of pass 1's bin, which pass 3 reads instead of the row when all
 * of them fit in `listCapacity`. After the last digit the threshold is one key value, of which
 * `equalTaken` holders are kept (when all of them are, the threshold becomes that key − 1 and
 * equalTaken 0, so the compaction needs one flag).
 */
export function dsaRadixSelectPlan(keys: ArrayLike<number>, k: number, listCapacity: number): DsaRadixSelectPlan {
  const row = Array.from(keys);
  const [b1, b2, b3] = DSA_TOPK_DIGIT_BITS as [number, number, number];
  const h1 = histogram(row, 32 - b1, b1, 0);
  const candidates = h1.reduce((s, c) => s + c, 0);
  if (candidates <= k) return { candidates, selected: candidates, threshold: 0, equalTaken: 0, passes: 1, listed: false };
  const t1 = dsaThresholdBin(h1, k);
  let remaining = k - t1.above;
  const stop = (prefix: number, shift: number, passes: number): DsaRadixSelectPlan => ({
    candidates,
    selected: k,
    threshold: prefix * 2 ** shift - 1,
    equalTaken: 0,
    passes,
    listed: false,
  });
  if (remaining === t1.count) return stop(t1.bin, 32 - b1, 1);
  const list = row.filter((key) => key !== 0 && Math.floor(key / 2 ** (32 - b1)) === t1.bin);
  const t2 = dsaThresholdBin(histogram(list, b3, b2, t1.bin), remaining);
  remaining -= t2.above;
  const prefix = t1.bin * 2 ** b2 + t2.bin;
  if (remaining === t2.count) return stop(prefix, b3, 2);
  const listed = t1.count <= listCapacity;
  const t3 = dsaThresholdBin(histogram(listed ? list : row, 0, b3, prefix), remaining);
  const key = prefix * 2 ** b3 + t3.bin;
  const taken = remaining - t3.above;
  // Every holder of the threshold key kept: the keys above key − 1 are the kept ones.
  const whole = taken === t3.count;
  return { candidates, selected: k, threshold: whole ? key - 1 : key, equalTaken: whole ? 0 : taken, passes: 3, listed };
}

/**
 * The ordered compaction: scanning the row in position order, a key above the threshold is kept,
 * and one equal to it while fewer than `equalTaken` equal ones came before; position p goes to slot
 * (kept above before p) + min(equal before p, equalTaken). Returns the kept positions, ascending.
 */
export function dsaRadixSelectPositions(keys: ArrayLike<number>, plan: DsaRadixSelectPlan): number[] {
  const out: number[] = [];
  let above = 0;
  let equal = 0;
  for (let p = 0; p < keys.length; p++) {
    const key = keys[p]!;
    const isAbove = key > plan.threshold;
    const isEqual = key === plan.threshold;
    if (isAbove || (isEqual && equal < plan.equalTaken)) out[above + Math.min(equal, plan.equalTaken)] = p;
    if (isAbove) above++;
    if (isEqual) equal++;
  }
  return out;
}

/** The kernel's selection of every row on the CPU ([rows][k] int32, −1 padded), as dsaTopkReference lays it out. */
export function dsaRadixSelect(input: DsaTopkRows, listCapacity: number): Int32Array {
  const { logits, rows, rowStride, k } = input;
  const out = new Int32Array(rows * k).fill(-1);
  for (let r = 0; r < rows; r++) {
    const length = input.lengths === undefined ? rowStride : Math.max(0, Math.min(rowStride, input.lengths[r]!));
    const keys = dsaTopkRowKeys(logits, r * rowStride, length);
    out.set(dsaRadixSelectPositions(keys, dsaRadixSelectPlan(keys, k, listCapacity)), r * k);
  }
  return out;
}
