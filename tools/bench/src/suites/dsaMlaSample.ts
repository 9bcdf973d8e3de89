// Checking a sparse MLA prefill or decode on a sample of its queries against kernels/dsa's float64 reference: the
// whole problem (4096 queries × 128 heads × 2048 tokens) is too big for the CPU, but a query's outputs depend only on
// its q rows, its index row and the kv rows it names. So a few queries are cut out as a problem of their own —
// their q rows, their index rows renumbered over a compact kv of just the tokens they name (for the decode: the
// cache rows dequantized) — whose outputs are the big problem's at those queries, and compareDsaSparseMla holds ours
// there to the kernel's error bound.
import {
  compareDsaSparseMla,
  DSA_SPARSE_MLA_QK_DIM,
  DSA_SPARSE_MLA_V_DIM,
  dsaBf16Values,
  dsaMlaCacheRowReader,
  dsaSparseMlaPrefillReferenceWithBound,
  type DsaSparseMlaArrayComparison,
  type DsaSparseMlaPrefillInput,
} from '@tilekit/kernel-dsa';
import type { OwnCheck } from '../benchSuite.ts';
import { dsaSpread } from './dsaLogitsSample.ts';

/** Queries a check samples (each with all its heads). */
export const DSA_MLA_SAMPLE_QUERIES = 8;

const DQK = DSA_SPARSE_MLA_QK_DIM;
const DV = DSA_SPARSE_MLA_V_DIM;

/** A prefill's inputs on the host as the device holds them: q and kv as bf16 bit patterns. */
export interface DsaMlaPrefillHost {
  readonly sQ: number;
  readonly hQ: number;
  readonly sKv: number;
  readonly topk: number;
  readonly smScale: number;
  /** [sQ][hQ][576] bf16 bits. */
  readonly q: Uint16Array;
  /** [sKv][576] bf16 bits. */
  readonly kv: Uint16Array;
  /** [sQ][topk]; anything outside [0, sKv) is invalid. */
  readonly indices: Int32Array;
}

/** A kernel's prefill outputs: out [sQ][hQ][512] bf16 bits, lse and maxLogits [sQ][hQ]. */
export interface DsaMlaPrefillOutputs {
  readonly out: Uint16Array;
  readonly lse: Float32Array;
  readonly maxLogits: Float32Array;
}

/** The queries a check takes: spread evenly with the first and the last, ascending. */
export function dsaMlaSampleQueries(sQ: number, want = DSA_MLA_SAMPLE_QUERIES): number[] {
  return dsaSpread(sQ, want);
}

/** What a sub-problem is cut from: per query its hQ·576 q values and its topk index entries, and a token's 576 kv values. */
interface DsaMlaRows {
  readonly rows: number;
  readonly hQ: number;
  readonly topk: number;
  readonly smScale: number;
  /** The q values of query row t (hQ · 576, bf16-valued). */
  readonly qOf: (t: number) => Float32Array;
  /** Index entry j of query row t. */
  readonly entry: (t: number, j: number) => number;
  /** The 576 values of a valid token, or undefined for an invalid entry. */
  readonly readKv: (token: number) => Float32Array | undefined;
}

/**
 * The sampled query rows as a prefill of their own: their q rows in sample order; kv = the distinct valid tokens their
 * index rows name, in order of first appearance; each index row renumbered over that kv (an invalid entry becomes −1).
 * Its outputs at query i are the full problem's at query row `queries[i]`.
 */
function subproblemOf(x: DsaMlaRows, queries: readonly number[]): DsaSparseMlaPrefillInput {
  const { hQ, topk } = x;
  const slot = new Map<number, number>();
  const rows: Float32Array[] = [];
  const indices = new Int32Array(queries.length * topk);
  queries.forEach((t, i) => {
    if (!(Number.isSafeInteger(t) && t >= 0 && t < x.rows)) throw new RangeError(`sampled query ${t} is outside [0, ${x.rows})`);
    for (let j = 0; j < topk; j++) {
      const token = x.entry(t, j);
      if (!slot.has(token)) {
        const row = x.readKv(token);
        if (row === undefined) {
          indices[i * topk + j] = -1;
          continue;
        }
        slot.set(token, rows.length);
        rows.push(row);
      }
      indices[i * topk + j] = slot.get(token)!;
    }
  });
  const kv = new Float32Array(rows.length * DQK);
  rows.forEach((row, at) => kv.set(row, at * DQK));
  const q = new Float32Array(queries.length * hQ * DQK);
  queries.forEach((t, i) => q.set(x.qOf(t), i * hQ * DQK));
  return { q, kv, indices, sQ: queries.length, hQ, sKv: rows.length, topk, smScale: x.smScale };
}

/** The sampled queries of a prefill as a prefill of their own (see subproblemOf). */
export function dsaMlaSubproblem(host: DsaMlaPrefillHost, queries: readonly number[]): DsaSparseMlaPrefillInput {
  const { hQ, topk, sKv } = host;
  return subproblemOf(
    {
      rows: host.sQ,
      hQ,
      topk,
      smScale: host.smScale,
      qOf: (t) => dsaBf16Values(host.q.subarray(t * hQ * DQK, (t + 1) * hQ * DQK)),
      entry: (t, j) => host.indices[t * topk + j]!,
      readKv: (token) => (token >= 0 && token < sKv ? dsaBf16Values(host.kv.subarray(token * DQK, (token + 1) * DQK)) : undefined),
    },
    queries,
  );
}

/** Our outputs at the sampled queries, in the sub-problem's layout. */
export function dsaMlaSampledOutputs(ours: DsaMlaPrefillOutputs, hQ: number, queries: readonly number[]): DsaMlaPrefillOutputs {
  const out = new Uint16Array(queries.length * hQ * DV);
  const lse = new Float32Array(queries.length * hQ);
  const maxLogits = new Float32Array(queries.length * hQ);
  queries.forEach((t, i) => {
    out.set(ours.out.subarray(t * hQ * DV, (t + 1) * hQ * DV), i * hQ * DV);
    lse.set(ours.lse.subarray(t * hQ, (t + 1) * hQ), i * hQ);
    maxLogits.set(ours.maxLogits.subarray(t * hQ, (t + 1) * hQ), i * hQ);
  });
  return { out, lse, maxLogits };
}

function arrayDetail(name: string, v: DsaSparseMlaArrayComparison): string {
  return `${name} ${v.failures}/${v.checked} over (worst ratio to the bound ${v.worstRatio.toFixed(3)})`;
}

/**
 * Our out, lse and maxLogits at the sampled queries (every head) against dsaSparseMlaPrefillReferenceWithBound
 * of the sub-problem, within compareDsaSparseMla's per-element bound (OurCaseResult.checks).
 */
export function dsaMlaSampleCheck(host: DsaMlaPrefillHost, ours: DsaMlaPrefillOutputs, queries = dsaMlaSampleQueries(host.sQ)): OwnCheck {
  const reference = dsaSparseMlaPrefillReferenceWithBound(dsaMlaSubproblem(host, queries));
  const v = compareDsaSparseMla(reference, dsaMlaSampledOutputs(ours, host.hQ, queries));
  const parts = [arrayDetail('out', v.out), arrayDetail('lse', v.lse), ...(v.maxLogits ? [arrayDetail('max', v.maxLogits)] : [])];
  return { ok: v.ok, detail: `queries ${queries.join(',')} × ${host.hQ} heads vs the float64 CPU reference: ${parts.join('; ')}` };
}

/** A decode's inputs on the host as the device holds them: q bf16 bits, the FP8 cache bytes, the slots. */
export interface DsaMlaDecodeHost {
  readonly b: number;
  readonly sQ: number;
  readonly hQ: number;
  readonly topk: number;
  readonly smScale: number;
  /** [b][sQ][hQ][576] bf16 bits. */
  readonly q: Uint16Array;
  /** The paged FP8 MLA cache (pages of 64 · 656 bytes). */
  readonly cache: Uint8Array;
  /** [b][sQ][topk] cache slots (page · 64 + offset). */
  readonly indices: Int32Array;
}

/**
 * Our decode out, lse and maxLogits at a sample of query rows (every head) against the float64 reference over the
 * dequantized cache (dsaMlaCacheRowReader: bf16(e4m3 · scale) ‖ RoPE), within compareDsaSparseMla's bound: the
 * sampled rows become a prefill of their own over the rows their slots name. lse and maxLogits are [b][hQ][sQ].
 */
export function dsaMlaDecodeSampleCheck(host: DsaMlaDecodeHost, ours: DsaMlaPrefillOutputs): OwnCheck {
  const { b, sQ, hQ, topk } = host;
  const rows = b * sQ;
  const queries = dsaMlaSampleQueries(rows);
  const readRow = dsaMlaCacheRowReader(host.cache);
  const x = subproblemOf(
    {
      rows,
      hQ,
      topk,
      smScale: host.smScale,
      qOf: (t) => dsaBf16Values(host.q.subarray(t * hQ * DQK, (t + 1) * hQ * DQK)),
      entry: (t, j) => host.indices[t * topk + j]!,
      readKv: (slot) => readRow(slot),
    },
    queries,
  );
  const scalar = (t: number, h: number): number => (Math.floor(t / sQ) * hQ + h) * sQ + (t % sQ);
  const sampled: DsaMlaPrefillOutputs = {
    out: dsaMlaSampledOutputs(ours, hQ, queries).out,
    lse: Float32Array.from({ length: queries.length * hQ }, (_, k) => ours.lse[scalar(queries[Math.floor(k / hQ)]!, k % hQ)]!),
    maxLogits: Float32Array.from({ length: queries.length * hQ }, (_, k) => ours.maxLogits[scalar(queries[Math.floor(k / hQ)]!, k % hQ)]!),
  };
  const v = compareDsaSparseMla(dsaSparseMlaPrefillReferenceWithBound(x), sampled);
  const parts = [arrayDetail('out', v.out), arrayDetail('lse', v.lse), ...(v.maxLogits ? [arrayDetail('max', v.maxLogits)] : [])];
  return {
    ok: v.ok,
    detail: `query rows ${queries.join(',')} × ${hQ} heads vs the float64 CPU reference over the dequantized cache: ${parts.join('; ')}`,
  };
}
