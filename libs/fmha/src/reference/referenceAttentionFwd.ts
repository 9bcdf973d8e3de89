import { attentionScoreAt } from './attentionScoreModifier.ts';
import { makeGenericAttentionMask } from '../mask/genericAttentionMask.ts';
import {
  attentionLseIndex,
  attentionRowOffset,
  resolveAttentionFwdArgs,
  valueTable16,
  type AttentionFwdArgs,
  type AttentionOperand,
  type ResolvedAttentionFwdArgs,
} from './attentionFwdArgs.ts';

/** The forward results: O in `oStrides`, LSE (natural log) per (batch, head, row), see `attentionLseIndex`. */
export interface AttentionFwdResult {
  readonly o: Float32Array;
  readonly lse: Float32Array;
  readonly args: ResolvedAttentionFwdArgs;
}

/** Rows of a query block: the inner kernel computes 4 rows at once (reusing each K/V load 4 times). */
const ROWS = 4;

/** Keys per pass of P·V: 4 rows of P and 2 rows of Vᵀ of this length stay in L1. */
const CHUNK = 512;

/**
 * out[r·ldo + c] (+)= Σ_t a[rowOff[r] + t] · b[bOff + c·ldb + t] for r < 4, c < cols, t < len
 * (overwritten, or added to with `accumulate`). Two columns per pass, eight independent sums: no
 * per-element allocation, loads shared across rows.
 */
function rowsTimesColumns(
  a: Float64Array,
  rowOff: Int32Array,
  b: Float64Array,
  bOff: number,
  ldb: number,
  cols: number,
  len: number,
  out: Float64Array,
  ldo: number,
  accumulate = false,
): void {
  const [a0, a1, a2, a3] = [rowOff[0]!, rowOff[1]!, rowOff[2]!, rowOff[3]!];
  if (!accumulate) for (let r = 0; r < ROWS; r++) out.fill(0, r * ldo, r * ldo + cols);
  let c = 0;
  for (; c + 1 < cols; c += 2) {
    const b0 = bOff + c * ldb;
    const b1 = b0 + ldb;
    let s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0, s30 = 0, s31 = 0; // prettier-ignore
    for (let t = 0; t < len; t++) {
      const x0 = b[b0 + t]!;
      const x1 = b[b1 + t]!;
      const y0 = a[a0 + t]!;
      const y1 = a[a1 + t]!;
      const y2 = a[a2 + t]!;
      const y3 = a[a3 + t]!;
      s00 += y0 * x0;
      s01 += y0 * x1;
      s10 += y1 * x0;
      s11 += y1 * x1;
      s20 += y2 * x0;
      s21 += y2 * x1;
      s30 += y3 * x0;
      s31 += y3 * x1;
    }
    out[c] = out[c]! + s00;
    out[c + 1] = out[c + 1]! + s01;
    out[ldo + c] = out[ldo + c]! + s10;
    out[ldo + c + 1] = out[ldo + c + 1]! + s11;
    out[2 * ldo + c] = out[2 * ldo + c]! + s20;
    out[2 * ldo + c + 1] = out[2 * ldo + c + 1]! + s21;
    out[3 * ldo + c] = out[3 * ldo + c]! + s30;
    out[3 * ldo + c + 1] = out[3 * ldo + c + 1]! + s31;
  }
  if (c < cols) {
    const b0 = bOff + c * ldb;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0; // prettier-ignore
    for (let t = 0; t < len; t++) {
      const x = b[b0 + t]!;
      s0 += a[a0 + t]! * x;
      s1 += a[a1 + t]! * x;
      s2 += a[a2 + t]! * x;
      s3 += a[a3 + t]! * x;
    }
    out[c] = out[c]! + s0;
    out[ldo + c] = out[ldo + c]! + s1;
    out[2 * ldo + c] = out[2 * ldo + c]! + s2;
    out[3 * ldo + c] = out[3 * ldo + c]! + s3;
  }
}

/** Rows [r0, r0 + rows) of head h of batch b, `dim` values each, packed into `out` (row-major) or transposed (`out[d·rows + r]`). */
function gather(
  op: AttentionOperand,
  a: ResolvedAttentionFwdArgs,
  rowStarts: readonly number[],
  b: number,
  h: number,
  rows: number,
  dim: number,
  out: Float64Array,
  transposed: boolean,
): void {
  const table = op.dtype === 'fp32' ? null : valueTable16(op.dtype);
  const data = op.data;
  for (let r = 0; r < rows; r++) {
    const base = attentionRowOffset(a, op.strides, rowStarts, b, h, r);
    for (let d = 0; d < dim; d++) {
      const raw = data[base + d]!;
      out[transposed ? d * rows + r : r * dim + d] = table === null ? raw : table[raw]!;
    }
  }
}

/**
 * With a score modifier, the kept scores of the block's rows become their modified logits
 * (scale·s through the modifier) and the softmax then scales by 1; without one, nothing changes.
 * Returns the scale the softmax applies.
 */
function modifyScores(
  a: ResolvedAttentionFwdArgs,
  h: number,
  sq: number,
  sk: number,
  blk: { s: Float64Array; r0: number; width: number; jlo: number; lo: Int32Array; hi: Int32Array },
): number {
  if (a.scoreModifier === undefined) return a.scale;
  const at = attentionScoreAt(a.scoreModifier, h, sq, sk);
  for (let r = 0; r < ROWS; r++)
    for (let j = blk.lo[r]!; j < blk.hi[r]!; j++) {
      const e = r * blk.width + j - blk.jlo;
      blk.s[e] = at.logit(blk.s[e]! * a.scale, blk.r0 + r, j);
    }
  return 1;
}

/**
 * CK-tile's FMHA forward on the host, in float64 arithmetic (at least as accurate as an fp32
 * reference; the probabilities are NOT narrowed to the input type), from fp16/bf16/fp32 storage:
 * per batch and query head, S = scale·Q·Kᵀ over the keys the mask keeps, P = exp(S − rowmax),
 * O = P·V / rowsum(P) rounded to fp32, LSE = rowmax + ln(rowsum) (natural log). A fully masked row
 * (or a batch without keys) gives O = 0 and LSE = −∞, never NaN. Rows of O the problem does not
 * cover (strided gaps) are left 0.
 *
 * Work is blocked by 4 query rows × 2 keys (or value dims) with K and Vᵀ of a (batch, kv head)
 * gathered once and shared by the query heads of its group, and only each block's kept key range
 * computed (a causal mask halves the work).
 * Postcondition (property-tested): equals `naiveAttentionFwd`, an independent per-element formula.
 * @throws ArgumentError (see `resolveAttentionFwdArgs`).
 */
export function referenceAttentionFwd(args: AttentionFwdArgs): AttentionFwdResult {
  const a = resolveAttentionFwdArgs(args);
  const { hdimQ: dq, hdimV: dv } = a;
  const o = new Float32Array(a.oElements);
  const lse = new Float32Array(a.nheadQ * a.rowsQ * (a.groupMode ? 1 : a.batch));
  const ratio = a.nheadQ / a.nheadK;
  const maxSk = Math.max(0, ...a.seqlensK);
  const maxSq = Math.max(0, ...a.seqlensQ);
  const k = new Float64Array(maxSk * dq);
  const vt = new Float64Array(maxSk * dv);
  const q = new Float64Array(maxSq * dq);
  const s = new Float64Array(ROWS * maxSk);
  const acc = new Float64Array(ROWS * dv);
  const rowOff = new Int32Array(ROWS);
  const lo = new Int32Array(ROWS);
  const hi = new Int32Array(ROWS);
  const rowMax = new Float64Array(ROWS);
  const rowSum = new Float64Array(ROWS);
  for (let b = 0; b < a.batch; b++) {
    const sq = a.seqlensQ[b]!;
    const sk = a.seqlensK[b]!;
    if (sq === 0) continue;
    const mask = makeGenericAttentionMask(a.mask, sq, sk);
    for (let hk = 0; hk < a.nheadK; hk++) {
      gather(args.k, a, a.rowStartsK, b, hk, sk, dq, k, false);
      gather(args.v, a, a.rowStartsK, b, hk, sk, dv, vt, true);
      for (let h = hk * ratio; h < (hk + 1) * ratio; h++) {
        gather(args.q, a, a.rowStartsQ, b, h, sq, dq, q, false);
        for (let r0 = 0; r0 < sq; r0 += ROWS) {
          // The block's key range: the union of its rows' kept ranges (contiguous: rows' edges grow together).
          let jlo = sk;
          let jhi = 0;
          for (let r = 0; r < ROWS; r++) {
            const [l, e] = mask.keyRangeOfRow(Math.min(r0 + r, sq - 1));
            lo[r] = l;
            hi[r] = r0 + r < sq ? e : l; // rows past the end repeat the last row and are dropped
            rowOff[r] = Math.min(r0 + r, sq - 1) * dq;
            if (hi[r]! > lo[r]!) {
              jlo = Math.min(jlo, l);
              jhi = Math.max(jhi, e);
            }
          }
          const width = Math.max(0, jhi - jlo);
          if (width > 0) rowsTimesColumns(q, rowOff, k, jlo * dq, dq, width, dq, s, width);
          const scale = modifyScores(a, h, sq, sk, { s, r0, width, jlo, lo, hi });
          for (let r = 0; r < ROWS; r++) {
            let m = -Infinity;
            for (let j = lo[r]!; j < hi[r]!; j++) m = Math.max(m, s[r * width + j - jlo]! * scale);
            let sum = 0;
            for (let j = jlo; j < jhi; j++) {
              const at = r * width + j - jlo;
              const p = j >= lo[r]! && j < hi[r]! ? Math.exp(s[at]! * scale - m) : 0;
              s[at] = p;
              sum += p;
            }
            rowMax[r] = m;
            rowSum[r] = sum;
          }
          acc.fill(0);
          for (let c0 = 0; c0 < width; c0 += CHUNK) {
            for (let r = 0; r < ROWS; r++) rowOff[r] = r * width + c0;
            rowsTimesColumns(s, rowOff, vt, jlo + c0, sk, dv, Math.min(CHUNK, width - c0), acc, dv, true);
          }
          for (let r = 0; r < ROWS && r0 + r < sq; r++) {
            const sum = rowSum[r]!;
            const base = attentionRowOffset(a, a.oStrides, a.rowStartsQ, b, h, r0 + r);
            for (let d = 0; d < dv; d++) o[base + d] = sum > 0 ? acc[r * dv + d]! / sum : 0;
            lse[attentionLseIndex(a, b, h, r0 + r)] = sum > 0 ? rowMax[r]! + Math.log(sum) : -Infinity;
          }
        }
      }
    }
  }
  return { o, lse, args: a };
}
