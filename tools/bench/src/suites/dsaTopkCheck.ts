// Checking a top-k selection on the host: dsaTopkReference's exact rule (the k largest candidates, ties to
// the lower position, ascending, −1 padding) computed fast enough for 128 rows of 128K logits, the first
// row that differs, and the selected logits sorted descending (what the reference server compares with
// torch.topk's, so that ties may be broken either way there).
import type { OwnCheck } from '../benchSuite.ts';

const SIGN = 0x8000_0000;
const NEGATIVE_INFINITY_BITS = 0xff80_0000;
const EXPONENT_BITS = 0x7f80_0000;

/**
 * The order-preserving uint32 key of fp32 bits, −0 taken as +0 (dsaTopkReference compares values, so −0 and
 * +0 tie and go by position); undefined for a non-candidate (−∞ or NaN).
 */
function candidateKey(bits: number): number | undefined {
  if (bits === NEGATIVE_INFINITY_BITS || (bits & 0x7fff_ffff) > EXPONENT_BITS) return undefined;
  if (bits === SIGN) return SIGN;
  return (bits & SIGN ? ~bits : bits | SIGN) >>> 0;
}

/** The first index of `sorted` (ascending) whose key exceeds `key`. */
function upperBound(sorted: Uint32Array, key: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One row's selection into `out` (k entries from `at`): candidates above the threshold key and the lowest positions at it. */
function selectRow(bits: Uint32Array, base: number, length: number, k: number, out: Int32Array, at: number): void {
  const keys = new Uint32Array(length);
  const positions = new Int32Array(length);
  let n = 0;
  for (let p = 0; p < length; p++) {
    const key = candidateKey(bits[base + p]!);
    if (key === undefined) continue;
    keys[n] = key;
    positions[n++] = p;
  }
  if (n <= k) {
    out.set(positions.subarray(0, n), at);
    return;
  }
  const sorted = keys.slice(0, n).sort();
  const threshold = sorted[n - k]!;
  let atThreshold = k - (n - upperBound(sorted, threshold));
  let w = at;
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    if (key > threshold || (key === threshold && atThreshold-- > 0)) out[w++] = positions[i]!;
  }
}

/**
 * dsaTopkReference for [rows][rowStride] logits whose every row is rowStride long: [rows][k] int32, each row the
 * positions of its k largest candidates (neither −∞ nor NaN), ties to the lower position, ascending, then −1.
 * The same selection as dsaTopkReference (property-tested in its spec) through uint32 keys and a typed sort.
 */
export function dsaTopkSelect(logits: Float32Array, rows: number, rowStride: number, k: number): Int32Array {
  if (logits.length < rows * rowStride)
    throw new RangeError(`${logits.length} logits hold fewer than rows·rowStride = ${rows * rowStride}`);
  const bits = new Uint32Array(logits.buffer, logits.byteOffset, logits.length);
  const out = new Int32Array(rows * k).fill(-1);
  for (let r = 0; r < rows; r++) selectRow(bits, r * rowStride, rowStride, k, out, r * k);
  return out;
}

/** How many rows of two [rows][k] selections differ, and the first differing entry. */
export function dsaSelectionDifference(got: Int32Array, want: Int32Array, k: number): { readonly rows: number; readonly first?: string } {
  if (got.length !== want.length)
    return { rows: Math.ceil(Math.max(got.length, want.length) / k), first: `${got.length} entries, expected ${want.length}` };
  let rows = 0;
  let first: string | undefined;
  for (let r = 0; r * k < want.length; r++) {
    const i = got.subarray(r * k, (r + 1) * k).findIndex((v, j) => v !== want[r * k + j]);
    if (i < 0) continue;
    rows++;
    first ??= `row ${r} slot ${i}: got ${got[r * k + i]}, expected ${want[r * k + i]}`;
  }
  return first === undefined ? { rows } : { rows, first };
}

/** The check of a selection against the exact rule on the same logits (OurCaseResult.checks). */
export function dsaTopkCheck(logits: Float32Array, rows: number, rowStride: number, k: number, got: Int32Array): OwnCheck {
  const want = dsaTopkSelect(logits, rows, rowStride, k);
  const diff = dsaSelectionDifference(got, want, k);
  if (diff.rows === 0)
    return { ok: true, detail: `${rows} rows × top-${k} equal dsaTopkReference's selection (ties to the lower position)` };
  return { ok: false, detail: `${diff.rows} of ${rows} rows differ from dsaTopkReference's selection; first: ${diff.first}` };
}

/**
 * The logits a [rows][k] selection picked, sorted descending per row (index −1 or out of the row: −∞ for a
 * padding slot, NaN for an index that is no position): what the server compares with torch.topk's values.
 */
export function dsaSelectedValues(logits: Float32Array, rowStride: number, selection: Int32Array, k: number): Float32Array {
  const out = new Float32Array(selection.length);
  for (let r = 0; r * k < selection.length; r++) {
    const row = out.subarray(r * k, (r + 1) * k);
    for (let j = 0; j < k; j++) {
      const p = selection[r * k + j]!;
      row[j] = p === -1 ? Number.NEGATIVE_INFINITY : p >= 0 && p < rowStride ? logits[r * rowStride + p]! : Number.NaN;
    }
    row.sort().reverse();
  }
  return out;
}
