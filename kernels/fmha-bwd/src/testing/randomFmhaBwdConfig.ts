// Random valid attention-backward problems for the randomized GPU spec (fmhaBwdRandom.gpu.spec.ts):
// a fast-check arbitrary of small ragged shapes with every runtime option of the operator, kept
// cheap for the float64 CPU reference, drawn reproducibly from a seed, replayable from one JSON line;
// and the kernels the runner would select for a problem, found without a GPU.
import { type AttentionMaskSpec, type FmhaBwdExecutor, checkFmhaBwdProblem, FMHA_BWD_DTYPES, type FmhaBwdProblem } from '@tilekit/fmha';
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
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { FMHA_BWD_HEAD_DIMS, fmhaBwdDqModes, type FmhaBwdKernelSet } from '../fmhaBwdCatalog.ts';
import { dispatchFmhaBwd } from '../fmhaBwdDispatch.ts';
import { fmhaBwdLayoutProblems } from '../fmhaBwdRunner.ts';

/** Sequence lengths the draws pick from (0 only in group mode): `ATTENTION_RANDOM_SEQLENS`. */
export const FMHA_BWD_RANDOM_SEQLENS: readonly number[] = ATTENTION_RANDOM_SEQLENS;

/**
 * The most forward multiply-adds per case (Σ heads·sq·sk·(hdimQ + hdimV)): the float64 backward
 * reference (forward, then dP, dS, dQ, dK, dV) takes ~20 ns each in node, so ~40 ms at the bound.
 */
export const FMHA_BWD_RANDOM_MAX_COST = 2_000_000;

/** The seed of the GPU spec's draw when TILEKIT_RANDOM_SEED is not set. */
export const FMHA_BWD_RANDOM_DEFAULT_SEED = 20261126;

/** Cases of the GPU spec when TILEKIT_RANDOM_RUNS is not set. */
export const FMHA_BWD_RANDOM_DEFAULT_RUNS = 200;

/** Sequences as drawn (see `AttentionRandomSequences`). */
export type FmhaBwdRandomSequences = AttentionRandomSequences;

/** Batch mode (1–3 batches of one length pair) and group mode (1–4 sequences, empty ones included). */
export const fmhaBwdRandomSequencesArb: fc.Arbitrary<FmhaBwdRandomSequences> = attentionRandomSequencesArb;

/** No mask, causal from either corner, or a (left, right) window from either corner (−1 = unbounded). */
export const fmhaBwdRandomMaskArb: fc.Arbitrary<AttentionMaskSpec> = attentionRandomMaskArb;

/** Shortens the longest length until the cost is at most `maxCost` (see `fitAttentionSequencesToCost`). */
export const fitBwdSequencesToCost = fitAttentionSequencesToCost;

/** The forward multiply-adds of a problem drawn here (the CPU reference's work is proportional). */
export function fmhaBwdRandomCost(p: FmhaBwdProblem): number {
  return attentionSequencesCost(attentionSequencesOf(p), p.nheadQ, p.hdimQ + (p.hdimV ?? p.hdimQ));
}

interface DrawnBwd extends AttentionRandomHeads, AttentionRandomLayouts {
  readonly dtype: FmhaBwdProblem['dtype'];
  readonly d: number;
  readonly sequences: FmhaBwdRandomSequences;
  readonly mask: AttentionMaskSpec;
  readonly deterministic: boolean;
}

/** The problem of a draw (deterministic only where the head dim has a deterministic instance), within the cost bound. */
function problemOf(d: DrawnBwd): FmhaBwdProblem {
  const nheadQ = attentionRandomNheadQ(d);
  const s = fitBwdSequencesToCost(d.sequences, nheadQ, 2 * d.d, FMHA_BWD_RANDOM_MAX_COST);
  return {
    dtype: d.dtype,
    batch: s.batch,
    nheadQ,
    nheadK: d.nheadK,
    hdimQ: d.d,
    ...attentionProblemSequences(s),
    inputLayout: d.inputLayout,
    outputLayout: d.outputLayout,
    mask: d.mask,
    deterministic: d.deterministic && fmhaBwdDqModes(d.d).includes('split'),
  };
}

/**
 * Valid backward problems: fp16/bf16, d ∈ {64, 128, 256} (d = d_v), GQA (nheadK 1–2, ratio 1–4),
 * batch mode (1–3 batches) or group mode (1–4 sequences, empty ones included), lengths from
 * `FMHA_BWD_RANDOM_SEQLENS`, both layouts for Q/K/V/dQ/dK/dV and for O/dO, masks of every kind the
 * kernels take, atomic or deterministic dQ (deterministic only for d ≤ 128, the instances there are).
 * Postconditions (randomFmhaBwdConfig.spec.ts): each passes `checkFmhaBwdProblem` and the runner's
 * layout rules, selects kernels (`fmhaBwdRandomKernelSet`), costs at most `FMHA_BWD_RANDOM_MAX_COST`
 * and survives a JSON round trip.
 */
export const fmhaBwdRandomProblemArb: fc.Arbitrary<FmhaBwdProblem> = fc
  .record({
    dtype: fc.constantFrom(...FMHA_BWD_DTYPES),
    d: fc.constantFrom(...FMHA_BWD_HEAD_DIMS),
    ...attentionRandomHeadsFields,
    sequences: fmhaBwdRandomSequencesArb,
    ...attentionRandomLayoutsFields,
    mask: fmhaBwdRandomMaskArb,
    deterministic: fc.boolean(),
  })
  .map(problemOf);

/** `runs` problems drawn from `seed` (the same list for the same arguments). */
export function fmhaBwdRandomProblems(seed: number, runs: number): FmhaBwdProblem[] {
  return fc.sample(fmhaBwdRandomProblemArb, { seed, numRuns: runs });
}

const NO_EXECUTOR: FmhaBwdExecutor<undefined> = { copyToDevice: () => {}, fillZero: () => {}, launch: () => {} };

/**
 * The compiled instances `FmhaBwdRunner.create` selects for `problem` on a device of `smCount` SMs,
 * found without one: the problem and layout checks, then `dispatchFmhaBwd`.
 * @throws FmhaBwdArgumentError / ArgumentError (layout) / NoFmhaBwdInstanceError as `create` would.
 */
export function fmhaBwdRandomKernelSet(problem: FmhaBwdProblem, smCount: number): FmhaBwdKernelSet {
  const p = checkFmhaBwdProblem(problem);
  const layout = fmhaBwdLayoutProblems(p);
  if (layout.length > 0) throw new ArgumentError('problem', `the backward kernels cannot take this layout: ${layout.join('; ')}`);
  return dispatchFmhaBwd(p, { executor: NO_EXECUTOR, smCount }).kernels;
}
