// Sparse MLA attention (FlashMLA's flash_mla_sparse_fwd and sparse FP8 decode) on the CPU, in float64.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { dsaCheckCount, dsaCheckFinite, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaSparseMlaAttendRow, type DsaSparseMlaRowOutput } from './dsaSparseMlaAttendRow.ts';
import { dsaSparseMlaRowsReader, type DsaSparseMlaRowReader } from './dsaSparseMlaRowsReader.ts';

const DQK = DSA_SPARSE_MLA_QK_DIM;
const DV = DSA_SPARSE_MLA_V_DIM;

/** What both sparse MLA problems share. */
export interface DsaSparseMlaCommonInput {
  readonly hQ: number;
  readonly topk: number;
  /** Softmax scale (DeepSeek-V3.2: DSA_SPARSE_MLA_SM_SCALE = 0.135234); positive and finite. */
  readonly smScale: number;
  /** [hQ] per-head sink logits (finite or −∞; −∞ is no sink): out is multiplied by e^lse / (e^lse + e^sink). */
  readonly attnSink?: Float32Array;
}

/** A sparse prefill problem: sQ queries over one bf16 latent KV sequence of sKv tokens. */
export interface DsaSparseMlaPrefillInput extends DsaSparseMlaCommonInput {
  /** [sQ][hQ][576] query values (bf16 values for a kernel comparison; the reference reads any finite values). */
  readonly q: Float32Array;
  /** [sKv][576] latent rows; V is the first 512 dims of each. */
  readonly kv: Float32Array;
  /** [sQ][topk] token indices; anything outside [0, sKv) (−1 included) is invalid and contributes nothing. */
  readonly indices: Int32Array;
  /** [sQ] entries of each row to use (each in [0, topk]); absent: all topk. */
  readonly topkLength?: Int32Array;
  readonly sQ: number;
  readonly sKv: number;
}

/** A sparse decode problem without its cache: b sequences of sQ queries each. */
export interface DsaSparseMlaDecodeProblem extends DsaSparseMlaCommonInput {
  /** [b][sQ][hQ][576] query values. */
  readonly q: Float32Array;
  /** [b][sQ][topk] cache slots (page · 64 + offset); negative (−1) or unreadable slots are invalid. */
  readonly indices: Int32Array;
  /** [b] entries of each sequence's rows to use (each in [0, topk]); absent: all topk. */
  readonly topkLength?: Int32Array;
  readonly b: number;
  readonly sQ: number;
}

/** A sparse decode problem with the cache's decoded-row reader (e.g. bf16(e4m3 · scale) ‖ bf16 RoPE per slot). */
export interface DsaSparseMlaDecodeInput extends DsaSparseMlaDecodeProblem {
  /** The decoded 576-value row of a slot, or undefined for a slot outside the cache (invalid). */
  readonly readRow: DsaSparseMlaRowReader;
}

/**
 * Sparse MLA outputs (float64 results rounded once to float32). Prefill: out [sQ][hQ][512], lse and maxLogits [sQ][hQ].
 * Decode: out [b][sQ][hQ][512], lse and maxLogits [b][hQ][sQ] (FlashMLA's transposed lse layout). A row with no valid
 * token has out 0, lse +∞, maxLogits −∞; lse is a natural log.
 */
export interface DsaSparseMlaResult {
  readonly out: Float32Array;
  readonly lse: Float32Array;
  readonly maxLogits: Float32Array;
}

/** Per-element error bounds of a kernel's outputs, in the layouts of {@link DsaSparseMlaResult} (see dsaSparseMlaErrorBound). */
export interface DsaSparseMlaBound {
  readonly out: Float64Array;
  readonly lse: Float64Array;
  readonly maxLogits: Float64Array;
}

/** A reference result with the bound a kernel's outputs must stay within ({@link compareDsaSparseMla}). */
export interface DsaSparseMlaResultWithBound extends DsaSparseMlaResult {
  readonly bound: DsaSparseMlaBound;
}

function checkCommon(x: DsaSparseMlaCommonInput): void {
  dsaCheckCount('hQ', x.hQ);
  dsaCheckCount('topk', x.topk);
  if (!(x.smScale > 0 && Number.isFinite(x.smScale))) throw new DsaArgumentError('smScale', 'must be positive and finite', x.smScale);
  if (x.attnSink === undefined) return;
  dsaCheckLength('attnSink', x.attnSink, x.hQ, 'hQ');
  x.attnSink.forEach((v, h) => {
    if (Number.isNaN(v) || v === Number.POSITIVE_INFINITY) throw new DsaArgumentError(`attnSink[${h}]`, 'must be finite or −∞', v);
  });
}

function checkTopkLength(topkLength: Int32Array | undefined, entries: number, what: string, topk: number): void {
  if (topkLength === undefined) return;
  dsaCheckLength('topkLength', topkLength, entries, what);
  topkLength.forEach((n, i) => {
    if (n < 0 || n > topk) throw new DsaArgumentError(`topkLength[${i}]`, `must lie in [0, topk = ${topk}]`, n);
  });
}

/** The valid rows of one index list, in list order (each duplicate repeated). */
function gather(indices: Int32Array, readRow: DsaSparseMlaRowReader): Float32Array[] {
  const keys: Float32Array[] = [];
  for (const index of indices) {
    const row = index < 0 ? undefined : readRow(index);
    if (row === undefined) continue;
    dsaCheckLength(`readRow(${index})`, row, DQK, 'the latent row dims');
    dsaCheckFinite(`readRow(${index})`, row);
    keys.push(row);
  }
  return keys;
}

interface Layout {
  readonly rows: number;
  readonly hQ: number;
  /** Index into lse/maxLogits of query row r, head h. */
  readonly scalarAt: (r: number, h: number) => number;
}

function attendAll(
  x: DsaSparseMlaCommonInput & { q: Float32Array },
  layout: Layout,
  keysOf: (r: number) => Float32Array[],
): DsaSparseMlaResultWithBound {
  const { rows, hQ } = layout;
  const res = { out: new Float32Array(rows * hQ * DV), lse: new Float32Array(rows * hQ), maxLogits: new Float32Array(rows * hQ) };
  const bound = { out: new Float64Array(rows * hQ * DV), lse: new Float64Array(rows * hQ), maxLogits: new Float64Array(rows * hQ) };
  for (let r = 0; r < rows; r++) {
    const keys = keysOf(r);
    for (let h = 0; h < hQ; h++) {
      const at = r * hQ + h;
      const dst: DsaSparseMlaRowOutput = {
        out: res.out.subarray(at * DV, (at + 1) * DV),
        outBound: bound.out.subarray(at * DV, (at + 1) * DV),
        ...{ lse: 0, maxLogits: 0, lseBound: 0, maxBound: 0 },
      };
      dsaSparseMlaAttendRow({ q: x.q.subarray(at * DQK, (at + 1) * DQK), keys, smScale: x.smScale, sink: x.attnSink?.[h] }, dst);
      const i = layout.scalarAt(r, h);
      [res.lse[i], res.maxLogits[i], bound.lse[i], bound.maxLogits[i]] = [dst.lse, dst.maxLogits, dst.lseBound, dst.maxBound];
    }
  }
  return { ...res, bound };
}

/**
 * Sparse MLA prefill with the error bound of a bf16 kernel (see {@link DsaSparseMlaResultWithBound}): for query t and head h,
 * s_j = smScale · q[t,h]·kv[j] over the valid entries j of indices[t][0 : topkLength[t]] (each duplicate counted as often as
 * it appears, as a plain gather + softmax does), out = Σ softmax(s)_j · kv[j][0:512] (times the sink factor), lse = ln Σ e^{s_j},
 * maxLogits = max s_j.
 * @throws DsaArgumentError for a size that is not a positive integer, an array of the wrong length, a non-finite q or kv value,
 * smScale not positive and finite, a NaN or +∞ sink, or a topkLength entry outside [0, topk].
 */
export function dsaSparseMlaPrefillReferenceWithBound(x: DsaSparseMlaPrefillInput): DsaSparseMlaResultWithBound {
  checkCommon(x);
  dsaCheckCount('sQ', x.sQ);
  dsaCheckCount('sKv', x.sKv, 0);
  dsaCheckLength('q', x.q, x.sQ * x.hQ * DQK, 'sQ·hQ·576');
  dsaCheckLength('kv', x.kv, x.sKv * DQK, 'sKv·576');
  dsaCheckLength('indices', x.indices, x.sQ * x.topk, 'sQ·topk');
  dsaCheckFinite('q', x.q);
  checkTopkLength(x.topkLength, x.sQ, 'sQ', x.topk);
  const readRow = dsaSparseMlaRowsReader(x.kv, x.sKv);
  const keysOf = (t: number): Float32Array[] => gather(x.indices.subarray(t * x.topk, t * x.topk + (x.topkLength?.[t] ?? x.topk)), readRow);
  return attendAll(x, { rows: x.sQ, hQ: x.hQ, scalarAt: (t, h) => t * x.hQ + h }, keysOf);
}

/**
 * Sparse MLA decode over a paged cache, with the error bound of a bf16 kernel: as the prefill, with query row (i, s) of
 * sequence i reading indices[i][s][0 : topkLength[i]] through `readRow` (a negative slot, or one it returns undefined for,
 * is invalid); out [b][sQ][hQ][512], lse and maxLogits [b][hQ][sQ].
 * @throws DsaArgumentError as the prefill, and for a row from readRow that is not 576 finite values.
 */
export function dsaSparseMlaDecodeReferenceWithBound(x: DsaSparseMlaDecodeInput): DsaSparseMlaResultWithBound {
  checkCommon(x);
  dsaCheckCount('b', x.b);
  dsaCheckCount('sQ', x.sQ);
  dsaCheckLength('q', x.q, x.b * x.sQ * x.hQ * DQK, 'b·sQ·hQ·576');
  dsaCheckLength('indices', x.indices, x.b * x.sQ * x.topk, 'b·sQ·topk');
  dsaCheckFinite('q', x.q);
  checkTopkLength(x.topkLength, x.b, 'b', x.topk);
  const keysOf = (r: number): Float32Array[] => {
    const n = x.topkLength?.[Math.floor(r / x.sQ)] ?? x.topk;
    return gather(x.indices.subarray(r * x.topk, r * x.topk + n), x.readRow);
  };
  const scalarAt = (r: number, h: number): number => (Math.floor(r / x.sQ) * x.hQ + h) * x.sQ + (r % x.sQ);
  return attendAll(x, { rows: x.b * x.sQ, hQ: x.hQ, scalarAt }, keysOf);
}

/** {@link dsaSparseMlaPrefillReferenceWithBound} without the bound. */
export function dsaSparseMlaPrefillReference(x: DsaSparseMlaPrefillInput): DsaSparseMlaResult {
  const { out, lse, maxLogits } = dsaSparseMlaPrefillReferenceWithBound(x);
  return { out, lse, maxLogits };
}

/** {@link dsaSparseMlaDecodeReferenceWithBound} without the bound. */
export function dsaSparseMlaDecodeReference(x: DsaSparseMlaDecodeInput): DsaSparseMlaResult {
  const { out, lse, maxLogits } = dsaSparseMlaDecodeReferenceWithBound(x);
  return { out, lse, maxLogits };
}
