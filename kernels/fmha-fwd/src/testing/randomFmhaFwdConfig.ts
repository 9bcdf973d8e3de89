// Random valid attention-forward problems for the randomized GPU spec (fmhaFwdRandom.gpu.spec.ts):
// a fast-check arbitrary of small ragged shapes with every runtime option of the operator, kept
// cheap for the CPU reference, drawn reproducibly from a seed, and replayable from one JSON line.
import { seqstartsOf, type AttentionMaskSpec, FMHA_FWD_DTYPES, FMHA_FWD_HEAD_DIMS, type FmhaFwdProblem } from '@tilekit/fmha';
import {
  ATTENTION_RANDOM_SEQLENS,
  attentionProblemSequences,
  attentionRandomHeadsFields,
  attentionRandomLayoutsFields,
  attentionRandomMaskArb,
  attentionRandomNheadQ,
  attentionRandomSequencesArb,
  attentionSequencesCost,
  attentionSequencesOf,
  fitAttentionSequencesToCost,
  type AttentionRandomHeads,
  type AttentionRandomLayouts,
  type AttentionRandomSequences,
} from '@tilekit/fmha/testing';
import fc from 'fast-check';

/** Sequence lengths the draws pick from (0 only in group mode): `ATTENTION_RANDOM_SEQLENS`. */
export const FMHA_FWD_RANDOM_SEQLENS: readonly number[] = ATTENTION_RANDOM_SEQLENS;

/** The most multiply-adds of the CPU reference per case (Σ heads·sq·sk·(hdimQ + hdimV)): ~25 ms in node. */
export const FMHA_FWD_RANDOM_MAX_COST = 16_000_000;

/** The seed of the GPU spec's draw when TILEKIT_RANDOM_SEED is not set. */
export const FMHA_FWD_RANDOM_DEFAULT_SEED = 20261126;

/** Cases of the GPU spec when TILEKIT_RANDOM_RUNS is not set. */
export const FMHA_FWD_RANDOM_DEFAULT_RUNS = 200;

/** Sequences as drawn (see `AttentionRandomSequences`). */
export type FmhaFwdRandomSequences = AttentionRandomSequences;

/** Batch and group (varlen, empty sequences included) sequences. */
export const fmhaFwdRandomSequencesArb: fc.Arbitrary<FmhaFwdRandomSequences> = attentionRandomSequencesArb;

/** No mask, causal from either corner, or a (left, right) window from either corner (−1 = unbounded). */
export const fmhaFwdRandomMaskArb: fc.Arbitrary<AttentionMaskSpec> = attentionRandomMaskArb;

/** Shortens the longest sequence until the CPU reference costs at most `maxCost` (see `fitAttentionSequencesToCost`). */
export const fitSequencesToCost = fitAttentionSequencesToCost;

/** Prefix sums from 0: the seqstart array of group mode (`seqstartsOf`). */
export const seqstartOf: (lens: readonly number[]) => number[] = seqstartsOf;

/** The CPU reference's multiply-adds for a problem drawn here (group mode: the slots, an upper bound when seqlenK trims them). */
export function fmhaFwdRandomCost(p: FmhaFwdProblem): number {
  return attentionSequencesCost(attentionSequencesOf(p), p.nheadQ, p.hdimQ + (p.hdimV ?? p.hdimQ));
}

interface DrawnFwd extends AttentionRandomHeads, AttentionRandomLayouts {
  readonly dtype: FmhaFwdProblem['dtype'];
  readonly dims: { readonly hdimQ: number; readonly hdimV: number };
  readonly sequences: FmhaFwdRandomSequences;
  readonly trimKeys: boolean;
  readonly mask: AttentionMaskSpec;
  readonly lse: boolean;
  readonly splitKv: number | 'auto';
}

/** The problem of a draw, its sequences shortened to `FMHA_FWD_RANDOM_MAX_COST`; only the fields it sets (a stable JSON line). */
function problemOf(d: DrawnFwd): FmhaFwdProblem {
  const nheadQ = attentionRandomNheadQ(d);
  const s = fitSequencesToCost(d.sequences, nheadQ, d.dims.hdimQ + d.dims.hdimV, FMHA_FWD_RANDOM_MAX_COST);
  const trimmed = s.group && d.trimKeys ? { seqlenK: s.sk.map((l) => Math.floor(l / 2)) } : {};
  const sequences = { ...attentionProblemSequences(s), ...trimmed };
  return {
    dtype: d.dtype,
    batch: s.batch,
    nheadQ,
    nheadK: d.nheadK,
    hdimQ: d.dims.hdimQ,
    hdimV: d.dims.hdimV,
    ...sequences,
    inputLayout: d.inputLayout,
    outputLayout: d.outputLayout,
    mask: d.mask,
    lse: d.lse,
    splitKv: d.splitKv,
  };
}

/**
 * Valid forward problems: fp16/bf16, every (hdimQ, hdimV) pair of the catalog, GQA (nheadK 1–2,
 * ratio 1–4), batch mode (1–3 batches) or group mode (1–4 sequences, empty ones included; keys
 * sometimes trimmed by per-batch seqlenK), lengths from `FMHA_FWD_RANDOM_SEQLENS`, both layouts for
 * input and output, masks of every kind the kernels take, LSE on/off, split-KV off, 'auto' or 2–7
 * splits. Postconditions (randomFmhaFwdConfig.spec.ts): each passes `checkFmhaFwdProblem`, plans to
 * an instance (`planFmhaFwd`), costs at most `FMHA_FWD_RANDOM_MAX_COST`, and survives a JSON round trip.
 */
export const fmhaFwdRandomProblemArb: fc.Arbitrary<FmhaFwdProblem> = fc
  .record({
    dtype: fc.constantFrom(...FMHA_FWD_DTYPES),
    dims: fc.constantFrom(...FMHA_FWD_HEAD_DIMS),
    ...attentionRandomHeadsFields,
    sequences: fmhaFwdRandomSequencesArb,
    trimKeys: fc.boolean(),
    ...attentionRandomLayoutsFields,
    mask: fmhaFwdRandomMaskArb,
    lse: fc.boolean(),
    splitKv: fc.constantFrom<number | 'auto'>(1, 1, 1, 'auto', 'auto', 2, 3, 7),
  })
  .map(problemOf);

/** `runs` problems drawn from `seed` (the same list for the same arguments). */
export function fmhaFwdRandomProblems(seed: number, runs: number): FmhaFwdProblem[] {
  return fc.sample(fmhaFwdRandomProblemArb, { seed, numRuns: runs });
}
