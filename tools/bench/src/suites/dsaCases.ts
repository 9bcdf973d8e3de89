// The dsa bench cases (issue 21): kernels/dsa's sparse MLA attention at DeepSeek-V3.2's shapes — the prefill over a
// bf16 latent KV (s_q 4096 queries of 128 heads, each attending to its own 2048 tokens of L ∈ {32K, 128K}) and the
// decode over the FP8 MLA cache (b ∈ {1, 32, 128} sequences × s_q ∈ {1, 2} queries of 128 heads, each over 2048 slots
// of an L-token cache); 576-dim latent rows, V = their first 512 dims, sm_scale 0.135234. The whole decode step is
// a case of its own (dsaStepCases.ts). What each case asks the reference server for (REFERENCE_OPS.md
// dsa_sparse_mla_prefill / dsa_sparse_mla_decode), how it is judged, and the FLOP count of its figure.
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_SM_SCALE, DSA_SPARSE_MLA_V_DIM } from '@tilekit/kernel-dsa';
import type { SuiteCase } from '../benchSuite.ts';
import { caseSeed } from './caseSeed.ts';
import { dsaCaseParam } from './dsaCaseParam.ts';
import { DSA_STEP_BENCH_CASES } from './dsaStepCases.ts';

/** A prefill case: sQ queries of hQ heads over L latent tokens, each query attending to topk of them. */
export interface DsaMlaPrefillBenchSpec {
  readonly mode: 'prefill';
  readonly sQ: number;
  readonly L: number;
  readonly hQ: number;
  readonly topk: number;
}

/** A decode case: b sequences of sQ queries of hQ heads, each over topk slots of one L-token FP8 cache. */
export interface DsaMlaDecodeBenchSpec {
  readonly mode: 'decode';
  readonly b: number;
  readonly sQ: number;
  readonly L: number;
  readonly hQ: number;
  readonly topk: number;
}

/** A case of the suite. */
export type DsaMlaBenchSpec = DsaMlaPrefillBenchSpec | DsaMlaDecodeBenchSpec;

export const DSA_MLA_PREFILL_QUERIES = 4096;
export const DSA_MLA_DECODE_BATCHES: readonly number[] = [1, 32, 128];
export const DSA_MLA_DECODE_QUERIES: readonly number[] = [1, 2];
export const DSA_MLA_PREFILL_CONTEXTS: readonly number[] = [32768, 131072];
export const DSA_MLA_HEADS = 128;
export const DSA_MLA_TOPK = 2048;

/** The server's baseline: gather the indexed rows, bf16 bmm, fp32 softmax (REFERENCE_OPS.md). */
export const DSA_MLA_TORCH_BASELINE = 'torch-gather';

/** Every case spec, in suite order: prefill by context, then decode by context, batch and queries per sequence. */
export function dsaMlaBenchSpecs(): DsaMlaBenchSpec[] {
  const common = { hQ: DSA_MLA_HEADS, topk: DSA_MLA_TOPK };
  const prefill = DSA_MLA_PREFILL_CONTEXTS.map((L): DsaMlaBenchSpec => ({ mode: 'prefill', sQ: DSA_MLA_PREFILL_QUERIES, L, ...common }));
  const decode = DSA_MLA_PREFILL_CONTEXTS.flatMap((L) =>
    DSA_MLA_DECODE_BATCHES.flatMap((b) => DSA_MLA_DECODE_QUERIES.map((sQ): DsaMlaBenchSpec => ({ mode: 'decode', b, sQ, L, ...common }))),
  );
  return [...prefill, ...decode];
}

/** `prefill_s4096_L131072_topk2048_h128`, `decode_b32_sq2_L131072_topk2048_h128`. */
export function dsaMlaCaseName(spec: DsaMlaBenchSpec): string {
  const head = spec.mode === 'prefill' ? `prefill_s${spec.sQ}` : `decode_b${spec.b}_sq${spec.sQ}`;
  return `${head}_L${spec.L}_topk${spec.topk}_h${spec.hQ}`;
}

/**
 * FlashMLA's FLOP count of a sparse MLA call: 2 · (valid index entries) · h_q · (576 + 512), one product per
 * head and selected token in Q·Kᵀ (576 dims) and in P·V (512 dims).
 */
export function dsaMlaFlops(validEntries: number, hQ: number): number {
  return 2 * validEntries * hQ * (DSA_SPARSE_MLA_QK_DIM + DSA_SPARSE_MLA_V_DIM);
}

/** The valid index entries of a bench case: every query's topk entries are distinct tokens of [0, L). */
export function dsaMlaValidEntries(spec: DsaMlaBenchSpec): number {
  return (spec.mode === 'prefill' ? spec.sQ : spec.b * spec.sQ) * Math.min(spec.topk, spec.L);
}

/** The params a record shows (flat; issue 21's names): mode, b, s_q, L (tokens), h_q, topk. */
function recordParams(spec: DsaMlaBenchSpec): Readonly<Record<string, string | number>> {
  return { mode: spec.mode, b: spec.mode === 'prefill' ? 1 : spec.b, s_q: spec.sQ, L: spec.L, h_q: spec.hQ, topk: spec.topk };
}

/** What the reference server is asked for: its op and params (REFERENCE_OPS.md). */
function referenceOf(spec: DsaMlaBenchSpec): SuiteCase['reference'] {
  const common = { h_q: spec.hQ, topk: spec.topk, sm_scale: DSA_SPARSE_MLA_SM_SCALE };
  if (spec.mode === 'prefill') return { op: 'dsa_sparse_mla_prefill', params: { s_q: spec.sQ, s_kv: spec.L, ...common } };
  return { op: 'dsa_sparse_mla_decode', params: { b: spec.b, s_q: spec.sQ, s_kv: spec.L, ...common } };
}

/**
 * The suite case of a spec: the server draws the inputs (q, kv or the FP8 cache, the index rows) and computes the fp32
 * reference; our `out` (bf16) and `lse` (fp32) are judged against it within 2× torch-gather's error (plus the floor).
 */
export function dsaMlaSuiteCase(spec: DsaMlaBenchSpec): SuiteCase {
  const name = dsaMlaCaseName(spec);
  return {
    name,
    params: recordParams(spec),
    reference: referenceOf(spec),
    seed: caseSeed(name),
    precision: { out: 'bf16', lse: 'fp32' },
    errorBaselines: [DSA_MLA_TORCH_BASELINE],
  };
}

/** Every case of the suite: the sparse MLA prefill and decode, then the whole decode step (dsaStepCases.ts). */
export const DSA_BENCH_CASES: readonly SuiteCase[] = [...dsaMlaBenchSpecs().map(dsaMlaSuiteCase), ...DSA_STEP_BENCH_CASES];

/** The spec a case was made from (read back from its params); a mode not measured here is refused. */
export function dsaMlaSpecOf(c: SuiteCase): DsaMlaBenchSpec {
  const common = { sQ: dsaCaseParam(c, 's_q'), L: dsaCaseParam(c, 'L'), hQ: dsaCaseParam(c, 'h_q'), topk: dsaCaseParam(c, 'topk') };
  if (c.params['mode'] === 'decode') return { mode: 'decode', b: dsaCaseParam(c, 'b'), ...common };
  if (c.params['mode'] !== 'prefill')
    throw new Error(`dsa case ${c.name}: mode ${String(c.params['mode'])} is not a sparse MLA call (prefill and decode)`);
  if (dsaCaseParam(c, 'b') !== 1) throw new Error(`dsa case ${c.name}: a prefill case has b = 1`);
  return { mode: 'prefill', ...common };
}
