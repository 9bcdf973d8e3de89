// Checking a sparse MLA prefill on a sample of its queries against kernels/dsa's float64 reference: the whole
// problem (4096 queries × 128 heads × 2048 tokens) is too big for the CPU, but a query's outputs depend only on
// its q rows, its index row and the kv rows it names. So a few queries are cut out as a problem of their own —
// their q rows, their index rows renumbered over a compact kv of just the tokens they name — whose outputs are
// the big problem's at those queries, and compareDsaSparseMla holds ours there to the kernel's error bound.
import {
  compareDsaSparseMla,
  DSA_SPARSE_MLA_QK_DIM,
  DSA_SPARSE_MLA_V_DIM,
  dsaBf16Values,
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

/**
 * The sampled queries as a prefill of their own: their q rows in sample order; kv = the distinct tokens their
 * index rows name, in order of first appearance; each index row renumbered over that kv (an invalid entry
 * becomes −1). Its outputs at query i are the full problem's at query `queries[i]`.
 */
export function dsaMlaSubproblem(host: DsaMlaPrefillHost, queries: readonly number[]): DsaSparseMlaPrefillInput {
  const { hQ, topk, sKv } = host;
  const slot = new Map<number, number>();
  const indices = new Int32Array(queries.length * topk);
  queries.forEach((t, i) => {
    if (!(Number.isSafeInteger(t) && t >= 0 && t < host.sQ)) throw new RangeError(`sampled query ${t} is outside [0, ${host.sQ})`);
    for (let j = 0; j < topk; j++) {
      const token = host.indices[t * topk + j]!;
      if (token < 0 || token >= sKv) {
        indices[i * topk + j] = -1;
        continue;
      }
      if (!slot.has(token)) slot.set(token, slot.size);
      indices[i * topk + j] = slot.get(token)!;
    }
  });
  const kv = new Uint16Array(slot.size * DQK);
  for (const [token, at] of slot) kv.set(host.kv.subarray(token * DQK, (token + 1) * DQK), at * DQK);
  const q = new Uint16Array(queries.length * hQ * DQK);
  queries.forEach((t, i) => q.set(host.q.subarray(t * hQ * DQK, (t + 1) * hQ * DQK), i * hQ * DQK));
  return { q: dsaBf16Values(q), kv: dsaBf16Values(kv), indices, sQ: queries.length, hQ, sKv: slot.size, topk, smScale: host.smScale };
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
