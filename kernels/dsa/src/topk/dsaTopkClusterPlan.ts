// The cluster top-k kernel on the CPU (its TS twin): a row split into C slices, one per CTA of a
// thread-block cluster; each radix pass sums the CTAs' slice histograms (what the kernel reduces
// through distributed shared memory) and finds the threshold bin of the sum; then every CTA counts
// its keys above and equal to the threshold, an exclusive scan over the cluster's counts gives each
// its output offset and its share of the ties (lower slices first), and each writes its kept
// positions in order. Property-tested against dsaTopkReference.
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';
import { DSA_TOPK_DIGIT_BITS, dsaThresholdBin, dsaTopkRowKeys } from './dsaRadixSelectPlan.ts';

/** Positions a slice is a multiple of (so every slice starts 16-byte and 64-byte aligned). */
export const DSA_TOPK_SLICE_GRANULE = 16;

/** The positions each CTA of a cluster of `cluster` owns in rows of `rowStride`: ⌈rowStride / cluster⌉ rounded up to DSA_TOPK_SLICE_GRANULE. */
export function dsaTopkClusterSlice(rowStride: number, cluster: number): number {
  return Math.ceil(Math.ceil(rowStride / cluster) / DSA_TOPK_SLICE_GRANULE) * DSA_TOPK_SLICE_GRANULE;
}

/** One CTA's part of the final selection. */
export interface DsaTopkClusterShare {
  /** Its slice's first position and length (clamped to the row's length; 0 past it). */
  readonly start: number;
  readonly length: number;
  /** Its keys above the threshold and equal to it. */
  readonly above: number;
  readonly equal: number;
  /** Its first output slot: Σ above + min(Σ equal, equalTaken) over the lower CTAs. */
  readonly base: number;
  /** How many of its keys equal to the threshold it keeps (its lowest positions). */
  readonly equalKept: number;
}

/** What the cluster kernel decides for one row. */
export interface DsaTopkClusterPlan {
  readonly candidates: number;
  /** min(k, candidates): the slots written; the rest hold −1. */
  readonly selected: number;
  /** Every key above it is kept (0 when every candidate is). */
  readonly threshold: number;
  /** Keys equal to the threshold kept over the whole row, lowest positions first. */
  readonly equalTaken: number;
  /** Histogram passes run (1 … 3). */
  readonly passes: number;
  readonly ctas: readonly DsaTopkClusterShare[];
}

/** The sum over the slices of each slice's histogram of `(key >>> shift) & (2^bits − 1)` over its candidate keys with `prefix` above the digit. */
function reducedHistogram(slices: readonly Uint32Array[], shift: number, bits: number, prefix: number): Uint32Array {
  const sum = new Uint32Array(2 ** bits);
  for (const keys of slices) {
    const local = new Uint32Array(2 ** bits);
    for (const key of keys) if (key !== 0 && Math.floor(key / 2 ** (shift + bits)) === prefix) local[(key >>> shift) & (2 ** bits - 1)]!++;
    local.forEach((c, b) => (sum[b]! += c));
  }
  return sum;
}

/** The threshold and the ties kept (passes of 12/10/10 bits over the reduced histograms, each stopping when its bin is taken whole). */
function clusterThreshold(slices: readonly Uint32Array[], k: number): Omit<DsaTopkClusterPlan, 'ctas' | 'selected'> {
  const [b1, b2, b3] = DSA_TOPK_DIGIT_BITS as [number, number, number];
  const h1 = reducedHistogram(slices, 32 - b1, b1, 0);
  const candidates = h1.reduce((s, c) => s + c, 0);
  if (candidates <= k) return { candidates, threshold: 0, equalTaken: 0, passes: 1 };
  const t1 = dsaThresholdBin(h1, k);
  let remaining = k - t1.above;
  if (remaining === t1.count) return { candidates, threshold: t1.bin * 2 ** (32 - b1) - 1, equalTaken: 0, passes: 1 };
  const t2 = dsaThresholdBin(reducedHistogram(slices, b3, b2, t1.bin), remaining);
  remaining -= t2.above;
  const prefix = t1.bin * 2 ** b2 + t2.bin;
  if (remaining === t2.count) return { candidates, threshold: prefix * 2 ** b3 - 1, equalTaken: 0, passes: 2 };
  const t3 = dsaThresholdBin(reducedHistogram(slices, 0, b3, prefix), remaining);
  const key = prefix * 2 ** b3 + t3.bin;
  const taken = remaining - t3.above;
  const whole = taken === t3.count;
  return { candidates, threshold: whole ? key - 1 : key, equalTaken: whole ? 0 : taken, passes: 3 };
}

/**
 * The cluster kernel's decisions for one row of `length` keys (dsaTopkKey) stored in rows of
 * `rowStride`: C = `cluster` slices of dsaTopkClusterSlice(rowStride, cluster) positions, the
 * threshold from the summed slice histograms, and each CTA's share after the exclusive scan of the
 * (above, equal) counts in slice order.
 */
export function dsaTopkClusterPlan(keys: ArrayLike<number>, rowStride: number, k: number, cluster: number): DsaTopkClusterPlan {
  const slice = dsaTopkClusterSlice(rowStride, cluster);
  const slices = Array.from({ length: cluster }, (_, r) => {
    const start = Math.min(r * slice, keys.length);
    return Uint32Array.from({ length: Math.min(keys.length - start, slice) }, (_, i) => keys[start + i]!);
  });
  const t = clusterThreshold(slices, k);
  const ctas: DsaTopkClusterShare[] = [];
  let above = 0;
  let equal = 0;
  slices.forEach((s, r) => {
    const mine = { above: s.filter((key) => key > t.threshold).length, equal: s.filter((key) => key === t.threshold).length };
    const equalKept = Math.min(mine.equal, Math.max(0, t.equalTaken - equal));
    ctas.push({ start: r * slice, length: s.length, ...mine, base: above + Math.min(equal, t.equalTaken), equalKept });
    above += mine.above;
    equal += mine.equal;
  });
  return { ...t, selected: Math.min(k, t.candidates), ctas };
}

/**
 * The ordered compaction of every CTA: in its slice, a key above the threshold is kept, and one
 * equal to it while fewer than its equalKept came before; position p goes to slot base + (kept
 * before p in the slice). Returns the row's kept positions by slot.
 */
export function dsaTopkClusterPositions(keys: ArrayLike<number>, plan: DsaTopkClusterPlan): number[] {
  const out: number[] = [];
  for (const cta of plan.ctas) {
    let above = 0;
    let equal = 0;
    for (let p = cta.start; p < cta.start + cta.length; p++) {
      const key = keys[p]!;
      const isAbove = key > plan.threshold;
      const isEqual = key === plan.threshold;
      if (isAbove || (isEqual && equal < cta.equalKept)) out[cta.base + above + Math.min(equal, cta.equalKept)] = p;
      if (isAbove) above++;
      if (isEqual) equal++;
    }
  }
  return out;
}

/** The cluster kernel's selection of every row on the CPU ([rows][k] int32, −1 padded) with clusters of `cluster` CTAs. */
export function dsaTopkClusterSelect(input: DsaTopkRows, cluster: number): Int32Array {
  const { logits, rows, rowStride, k } = input;
  const out = new Int32Array(rows * k).fill(-1);
  for (let r = 0; r < rows; r++) {
    const length = input.lengths === undefined ? rowStride : Math.max(0, Math.min(rowStride, input.lengths[r]!));
    const keys = dsaTopkRowKeys(logits, r * rowStride, length);
    out.set(dsaTopkClusterPositions(keys, dsaTopkClusterPlan(keys, rowStride, k, cluster)), r * k);
  }
  return out;
}
