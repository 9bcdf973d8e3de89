// The dsa bench cases (issue 21): kernels/dsa's sparse MLA prefill over a bf16 latent KV at DeepSeek-V3.2's
// shapes — s_q 4096 queries of 128 heads, each attending to its own 2048 tokens of L ∈ {32K, 128K} (576-dim
// latent rows, V = their first 512 dims, sm_scale 0.135234). Decode and the whole decode step join later.
// What each case asks the reference server for (REFERENCE_OPS.md dsa_sparse_mla_prefill), how it is judged,
// and the FLOP count of its figure.
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_SM_SCALE, DSA_SPARSE_MLA_V_DIM } from '@tilekit/kernel-dsa';
import type { SuiteCase } from '../benchSuite.ts';
import { caseSeed } from './caseSeed.ts';

/** A prefill case: sQ queries of hQ heads over L latent tokens, each query attending to topk of them. */
export interface DsaMlaPrefillBenchSpec {
  readonly mode: 'prefill';
  readonly sQ: number;
  readonly L: number;
  readonly hQ: number;
  readonly topk: number;
}

export const DSA_MLA_PREFILL_QUERIES = 4096;
export const DSA_MLA_PREFILL_CONTEXTS: readonly number[] = [32768, 131072];
export const DSA_MLA_HEADS = 128;
export const DSA_MLA_TOPK = 2048;

/** The server's baseline: gather the indexed rows, bf16 bmm, fp32 softmax (REFERENCE_OPS.md). */
export const DSA_MLA_TORCH_BASELINE = 'torch-gather';

/** Every case spec, in suite order (prefill by context). */
export function dsaMlaBenchSpecs(): DsaMlaPrefillBenchSpec[] {
  return DSA_MLA_PREFILL_CONTEXTS.map((L) => ({ mode: 'prefill', sQ: DSA_MLA_PREFILL_QUERIES, L, hQ: DSA_MLA_HEADS, topk: DSA_MLA_TOPK }));
}

/** `prefill_s4096_L131072_topk2048_h128`. */
export function dsaMlaCaseName(spec: DsaMlaPrefillBenchSpec): string {
  return `prefill_s${spec.sQ}_L${spec.L}_topk${spec.topk}_h${spec.hQ}`;
}

/**
 * FlashMLA's FLOP count of a sparse MLA call: 2 · (valid index entries) · h_q · (576 + 512), one product per
 * head and selected token in Q·Kᵀ (576 dims) and in P·V (512 dims).
 */
export function dsaMlaFlops(validEntries: number, hQ: number): number {
  return 2 * validEntries * hQ * (DSA_SPARSE_MLA_QK_DIM + DSA_SPARSE_MLA_V_DIM);
}

/** The valid index entries of a bench case: every query's topk entries are distinct tokens of [0, L). */
export function dsaMlaValidEntries(spec: DsaMlaPrefillBenchSpec): number {
  return spec.sQ * Math.min(spec.topk, spec.L);
}

/** The params a record shows (flat; issue 21's names): mode, b, s_q, L (tokens), h_q, topk. */
function recordParams(spec: DsaMlaPrefillBenchSpec): Readonly<Record<string, string | number>> {
  return { mode: spec.mode, b: 1, s_q: spec.sQ, L: spec.L, h_q: spec.hQ, topk: spec.topk };
}

/**
 * The suite case of a spec: the server draws q, kv and the index rows and computes the fp32 reference; our
 * `out` (bf16) and `lse` (fp32) are judged against it within 2× torch-gather's error (plus the floor).
 */
export function dsaMlaSuiteCase(spec: DsaMlaPrefillBenchSpec): SuiteCase {
  const name = dsaMlaCaseName(spec);
  const params = { s_q: spec.sQ, s_kv: spec.L, h_q: spec.hQ, topk: spec.topk, sm_scale: DSA_SPARSE_MLA_SM_SCALE };
  return {
    name,
    params: recordParams(spec),
    reference: { op: 'dsa_sparse_mla_prefill', params },
    seed: caseSeed(name),
    precision: { out: 'bf16', lse: 'fp32' },
    errorBaselines: [DSA_MLA_TORCH_BASELINE],
  };
}

/** Every case of the suite. */
export const DSA_BENCH_CASES: readonly SuiteCase[] = dsaMlaBenchSpecs().map(dsaMlaSuiteCase);

function param(c: SuiteCase, key: string): number {
  const value = c.params[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`dsa case ${c.name}: params.${key} must be a positive integer, not ${String(value)}`);
  return value;
}

/** The spec a case was made from (read back from its params); the modes not measured yet are refused. */
export function dsaMlaSpecOf(c: SuiteCase): DsaMlaPrefillBenchSpec {
  if (c.params['mode'] !== 'prefill')
    throw new Error(`dsa case ${c.name}: mode ${String(c.params['mode'])} is not measured yet (prefill only)`);
  if (param(c, 'b') !== 1) throw new Error(`dsa case ${c.name}: a prefill case has b = 1`);
  return { mode: 'prefill', sQ: param(c, 's_q'), L: param(c, 'L'), hQ: param(c, 'h_q'), topk: param(c, 'topk') };
}
