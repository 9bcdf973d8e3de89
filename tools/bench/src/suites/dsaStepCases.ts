// The dsa suite's decode-step cases (issue 21): kernels/dsa's whole decode step — the paged lightning indexer
// (64 index heads) over every context position, the exact top-2048 straight to cache slots, then the sparse MLA
// decode (128 heads) over the FP8 cache — for b ∈ {1, 32} sequences of one query at L = 128K, each sequence
// its own pages of both caches (one block table). Timed as one CUDA graph (the fewest host launches a step can take);
// the figure is the time (no FLOP count applies). What each case asks the reference server for (REFERENCE_OPS.md
// dsa_decode_step) and how it is judged.
import { DSA_SPARSE_MLA_SM_SCALE } from '@tilekit/kernel-dsa';
import type { SuiteCase } from '../benchSuite.ts';
import { caseSeed } from './caseSeed.ts';
import { dsaCaseParam } from './dsaCaseParam.ts';

/** A step case: b sequences of sQ queries at context L; indexHeads index heads, hQ attention heads, topk tokens each. */
export interface DsaStepBenchSpec {
  readonly mode: 'step';
  readonly b: number;
  readonly sQ: number;
  readonly L: number;
  readonly indexHeads: number;
  readonly hQ: number;
  readonly topk: number;
}

export const DSA_STEP_BATCHES: readonly number[] = [1, 32];
export const DSA_STEP_CONTEXT = 131072;
export const DSA_STEP_INDEX_HEADS = 64;

/** The server's baselines: torch's step eagerly, and captured as one CUDA graph (REFERENCE_OPS.md dsa_decode_step). */
export const DSA_STEP_TORCH_BASELINE = 'torch-gather';

/** Every step spec, by batch. */
export function dsaStepBenchSpecs(): DsaStepBenchSpec[] {
  return DSA_STEP_BATCHES.map((b) => ({
    mode: 'step',
    b,
    sQ: 1,
    L: DSA_STEP_CONTEXT,
    indexHeads: DSA_STEP_INDEX_HEADS,
    hQ: 128,
    topk: 2048,
  }));
}

/** `step_b32_sq1_L131072_topk2048_h128`. */
export function dsaStepCaseName(spec: DsaStepBenchSpec): string {
  return `step_b${spec.b}_sq${spec.sQ}_L${spec.L}_topk${spec.topk}_h${spec.hQ}`;
}

/**
 * The suite case of a step spec: the server draws both caches, the block table and the queries and computes the fp32
 * logits and the attention over their top-k; our logits (fp32) are judged against its, our out (bf16) and lse (fp32)
 * against its attention over OUR slots (sent as aux `slots`), all within 2× torch-gather's error (plus the floor).
 */
export function dsaStepSuiteCase(spec: DsaStepBenchSpec): SuiteCase {
  const name = dsaStepCaseName(spec);
  const { b, sQ, L, hQ, topk } = spec;
  return {
    name,
    params: { mode: 'step', b, s_q: sQ, L, h_q: hQ, topk },
    reference: { op: 'dsa_decode_step', params: { b, s_q: sQ, L, h: spec.indexHeads, h_q: hQ, topk, sm_scale: DSA_SPARSE_MLA_SM_SCALE } },
    seed: caseSeed(name),
    precision: { logits: 'fp32', out: 'bf16', lse: 'fp32' },
    errorBaselines: [DSA_STEP_TORCH_BASELINE],
  };
}

/** Every step case of the suite. */
export const DSA_STEP_BENCH_CASES: readonly SuiteCase[] = dsaStepBenchSpecs().map(dsaStepSuiteCase);

/** The step spec a case was made from (its params; the index heads from the server's params). */
export function dsaStepSpecOf(c: SuiteCase): DsaStepBenchSpec {
  if (c.params['mode'] !== 'step') throw new Error(`dsa case ${c.name}: mode ${String(c.params['mode'])} is not a step`);
  const h = c.reference.params['h'];
  if (typeof h !== 'number' || !Number.isSafeInteger(h) || h < 1)
    throw new Error(`dsa case ${c.name}: reference params.h must be a positive integer`);
  return {
    mode: 'step',
    b: dsaCaseParam(c, 'b'),
    sQ: dsaCaseParam(c, 's_q'),
    L: dsaCaseParam(c, 'L'),
    indexHeads: h,
    hQ: dsaCaseParam(c, 'h_q'),
    topk: dsaCaseParam(c, 'topk'),
  };
}
