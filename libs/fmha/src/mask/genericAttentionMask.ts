import { AttentionMaskError, checkAttentionMaskSpec, type AttentionMaskSpec } from './attentionMaskSpec.ts';

/** A half-open range [start, end) of key columns; empty when start === end (then both are 0). */
export type KeyRange = readonly [start: number, end: number];

/** CK's mask coordinates for one (seqlenQ, seqlenK): keep (i, j) iff i − y < j < i + x, inside the sequences. */
export interface MaskCoordinates {
  readonly y: number;
  readonly x: number;
}

/**
 * (y, x) of a spec for one sequence pair, CK-tile's `make_generic_attention_mask_coordinates_from_lr_window`
 * (top-left: x = 1 + right, y = 1 + left; bottom-right: x = 1 + right + sk − sq, y = 1 + left + sq − sk;
 * an unbounded size becomes the one that reaches the far corner), then clamped to y ∈ [−sk, sq],
 * x ∈ [−sq, sk]. The clamp keeps every (i, j) of the sequences masked or kept exactly as before and
 * keeps i ± x, i ± y within int32 for the emitted code. `none` gives (sq, sk), i.e. keep everything.
 */
export function maskCoordinates(spec: AttentionMaskSpec, seqlenQ: number, seqlenK: number): MaskCoordinates {
  let y: number;
  let x: number;
  switch (spec.kind) {
    case 'none':
      return { y: seqlenQ, x: seqlenK };
    case 'window': {
      const topLeft = spec.alignment === 'topLeft';
      const farLeft = topLeft ? seqlenQ - 1 : seqlenK - 1;
      const farRight = topLeft ? seqlenK - 1 : seqlenQ - 1;
      const left = spec.left < 0 || spec.left > farLeft ? farLeft : spec.left;
      const right = spec.right < 0 || spec.right > farRight ? farRight : spec.right;
      y = 1 + left + (topLeft ? 0 : seqlenQ - seqlenK);
      x = 1 + right + (topLeft ? 0 : seqlenK - seqlenQ);
      break;
    }
    case 'generic':
      y = spec.y;
      x = spec.x;
      break;
  }
  return { y: Math.min(Math.max(y, -seqlenK), seqlenQ), x: Math.min(Math.max(x, -seqlenQ), seqlenK) };
}

function checkSeqlen(where: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > 2 ** 30) {
    throw new AttentionMaskError(where, 'must be an integer in [0, 2^30]', v);
  }
  return v;
}

function checkIndex(where: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AttentionMaskError(where, 'must be a safe integer', v);
  return v;
}

function checkTile(where: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new AttentionMaskError(where, 'must be a positive integer', v);
  return v;
}

const floorTo = (v: number, n: number): number => Math.floor(v / n) * n;
const ceilTo = (v: number, n: number): number => Math.ceil(v / n) * n;

/**
 * CK-tile's `GenericAttentionMask` for one (seqlenQ, seqlenK): the ground truth `isMasked(i, j)`
 * and the tile queries a forward pipeline asks. Rows i ∉ [0, seqlenQ) and columns j ∉ [0, seqlenK)
 * (tile padding) count as masked. Query row i keeps the contiguous keys [max(i − y + 1, 0),
 * min(i + x, seqlenK)), possibly none (a fully masked row: O = 0, LSE = −∞).
 *
 * Postconditions (property-tested against brute force over random shapes, windows and tiles):
 * - `getTileRangeAlongX(i0, M, N)` is the smallest N-aligned range holding every kept key of rows
 *   [i0, i0 + M): its first and last tile hold a kept element; [0, 0] when all rows are masked;
 * - `getTileRangeAlongY(j0, N, M)` is the smallest M-aligned range holding every row that keeps one
 *   of the columns [j0, j0 + N); [0, 0] when none does;
 * - `isEdgeTile(i0, j0, M, N)` ⇔ some row of the tile inside the sequence has a masked element in
 *   the tile (so the pipeline must mask per element there; padding rows are never stored);
 * - the split ranges partition the tile range into N-aligned pieces.
 */
export class GenericAttentionMask {
  readonly spec: AttentionMaskSpec;
  readonly seqlenQ: number;
  readonly seqlenK: number;
  /** false for `none`: the kernel only masks the padding columns. */
  readonly masking: boolean;
  readonly y: number;
  readonly x: number;

  constructor(spec: AttentionMaskSpec, seqlenQ: number, seqlenK: number) {
    this.spec = checkAttentionMaskSpec(spec);
    this.seqlenQ = checkSeqlen('seqlenQ', seqlenQ);
    this.seqlenK = checkSeqlen('seqlenK', seqlenK);
    const c = maskCoordinates(this.spec, this.seqlenQ, this.seqlenK);
    this.masking = this.spec.kind !== 'none';
    this.y = c.y;
    this.x = c.x;
    Object.freeze(this);
  }

  /** Is (i, j) masked (−∞ before the softmax)? The ground truth every other query agrees with. */
  isMasked(i: number, j: number): boolean {
    if (i < 0 || i >= this.seqlenQ || j < 0 || j >= this.seqlenK) return true;
    return j <= i - this.y || j >= i + this.x;
  }

  /** The keys row i keeps, [lo, hi); [0, 0] when the row is fully masked (or outside the sequence). */
  keyRangeOfRow(i: number): KeyRange {
    checkIndex('i', i);
    if (i < 0 || i >= this.seqlenQ) return [0, 0];
    const lo = Math.max(i - this.y + 1, 0);
    const hi = Math.min(i + this.x, this.seqlenK);
    return hi > lo ? [lo, hi] : [0, 0];
  }

  /** Does row i (inside the sequence) keep no key at all? */
  isRowFullyMasked(i: number): boolean {
    const [lo, hi] = this.keyRangeOfRow(i);
    return lo === hi;
  }

  /**
   * [start, end), both multiples of `tileN`, of the key tiles query rows [i0, i0 + tileM) must visit.
   * Rows keep keys only between 1 − x ≤ i ≤ seqlenK + y − 2 (and when x + y ≥ 2); over those rows
   * the kept keys form one interval, from the first row's lower edge to the last row's upper edge.
   */
  getTileRangeAlongX(i0: number, tileM: number, tileN: number): KeyRange {
    checkIndex('i0', i0);
    checkTile('tileM', tileM);
    checkTile('tileN', tileN);
    const first = Math.max(i0, 0, 1 - this.x);
    const last = Math.min(i0 + tileM - 1, this.seqlenQ - 1, this.seqlenK + this.y - 2);
    if (first > last || this.x + this.y < 2 || this.seqlenK <= 0) return [0, 0];
    return [floorTo(Math.max(first - this.y + 1, 0), tileN), ceilTo(Math.min(last + this.x, this.seqlenK), tileN)];
  }

  /**
   * The part of `getTileRangeAlongX` that split `iSplit` of `numSplits` visits (split-KV): split s
   * owns keys [s·P, (s + 1)·P) with P = ⌈⌈seqlenK / numSplits⌉ / tileN⌉·tileN; [0, 0] when empty.
   */
  getTileRangeAlongXForSplit(i0: number, tileM: number, tileN: number, numSplits: number, iSplit: number): KeyRange {
    checkTile('numSplits', numSplits);
    checkIndex('iSplit', iSplit);
    if (iSplit < 0 || iSplit >= numSplits) throw new AttentionMaskError('iSplit', `must be in [0, numSplits = ${numSplits})`, iSplit);
    const [start, end] = this.getTileRangeAlongX(i0, tileM, tileN);
    const per = keysPerSplit(this.seqlenK, tileN, numSplits);
    const s = Math.max(start, iSplit * per);
    const e = Math.min(end, (iSplit + 1) * per);
    return e > s ? [s, e] : [0, 0];
  }

  /**
   * [start, end), both multiples of `tileM`, of the query tiles that key columns [j0, j0 + tileN)
   * must visit (the backward's loop, key tile outermost). Column j keeps the rows
   * j − x < i < j + y inside [0, seqlenQ); both edges grow with j, so over the tile's columns inside
   * the sequence the kept rows form one interval. [0, 0] when no column keeps a row.
   */
  getTileRangeAlongY(j0: number, tileN: number, tileM: number): KeyRange {
    checkIndex('j0', j0);
    checkTile('tileN', tileN);
    checkTile('tileM', tileM);
    const first = Math.max(j0, 0);
    const last = Math.min(j0 + tileN - 1, this.seqlenK - 1);
    if (first > last || this.x + this.y < 2 || this.seqlenQ <= 0) return [0, 0];
    const lo = Math.max(first - this.x + 1, 0);
    const hi = Math.min(last + this.y - 1, this.seqlenQ - 1);
    if (lo > hi) return [0, 0];
    return [floorTo(lo, tileM), ceilTo(hi + 1, tileM)];
  }

  /**
   * Does the tile [i0, i0 + tileM) × [j0, j0 + tileN) need per-element masking, i.e. does one of its
   * rows inside the sequence mask one of its columns? Kept keys per row grow with the row on both
   * edges, so the last row's lower edge and the first row's upper edge decide.
   */
  isEdgeTile(i0: number, j0: number, tileM: number, tileN: number): boolean {
    checkIndex('i0', i0);
    checkIndex('j0', j0);
    checkTile('tileM', tileM);
    checkTile('tileN', tileN);
    const first = Math.max(i0, 0);
    const last = Math.min(i0 + tileM - 1, this.seqlenQ - 1);
    if (first > last) return false;
    const lowerOfLast = Math.max(last - this.y + 1, 0);
    const upperOfFirst = Math.min(first + this.x, this.seqlenK);
    return lowerOfLast > j0 || upperOfFirst < j0 + tileN;
  }
}

/** Keys per split-KV piece: ⌈⌈seqlenK / numSplits⌉ / tileN⌉·tileN (0 when seqlenK = 0). */
export function keysPerSplit(seqlenK: number, tileN: number, numSplits: number): number {
  return ceilTo(Math.ceil(seqlenK / numSplits), tileN);
}

/**
 * The mask of `spec` for one sequence pair (CK's `make_generic_attention_mask` + coordinates).
 * @throws AttentionMaskError for a bad spec or a seqlen outside [0, 2^30].
 */
export function makeGenericAttentionMask(spec: AttentionMaskSpec, seqlenQ: number, seqlenK: number): GenericAttentionMask {
  return new GenericAttentionMask(spec, seqlenQ, seqlenK);
}
