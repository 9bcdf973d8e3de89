// Random valid Sparge problems for the randomized GPU spec (spargeRandom.gpu.spec.ts): a fast-check
// arbitrary of small ragged shapes with the operator's hyperparameters, pipelines and PV modes, kept
// cheap for the CPU references, drawn reproducibly from a seed, and replayable from one JSON line.
import { formatFmhaFwdProblem } from '@tilekit/fmha';
import {
  ATTENTION_RANDOM_SEQLENS,
  attentionProblemSequences,
  attentionRandomHeadsFields,
  attentionRandomLayoutsFields,
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
import { SPARGE_PIPELINES } from '../attention/spargeFwdInstance.ts';
import { spargeFwdUnsupported } from '../attention/spargeFwdLauncher.ts';
import { checkSpargePoolProblem } from '../blockMap/spargePoolProblem.ts';
import { checkSpargeSelectConfig } from '../blockMap/spargeSelectLauncher.ts';
import type { SpargeParams } from '../spargeHyperparameters.ts';
import { SPARGE_PV_MODES } from '../spargeReference.ts';
import { planSparge, type SpargePlan, type SpargeProblem } from '../spargeRunner.ts';
import { SPARGE_HEAD_DIMS } from '../spargeShape.ts';

/** Sequence lengths the draws pick from (0 only in group mode): `ATTENTION_RANDOM_SEQLENS`. */
export const SPARGE_RANDOM_SEQLENS: readonly number[] = ATTENTION_RANDOM_SEQLENS;

/** The most multiply-adds of the attention reference per case (Σ heads·sq·sk·2d). */
export const SPARGE_RANDOM_MAX_COST = 8_000_000;

/** The seed of the GPU spec's draw when TILEKIT_RANDOM_SEED is not set. */
export const SPARGE_RANDOM_DEFAULT_SEED = 20261126;

/** Cases of the GPU spec when TILEKIT_RANDOM_RUNS is not set. */
export const SPARGE_RANDOM_DEFAULT_RUNS = 200;

/** Sequences as drawn (see `AttentionRandomSequences`). */
export type SpargeRandomSequences = AttentionRandomSequences;

/** Batch mode (1–3 batches of one length pair) or group mode (1–4 sequences, empty ones included). */
export const spargeRandomSequencesArb: fc.Arbitrary<SpargeRandomSequences> = attentionRandomSequencesArb;

/** Shortens the longest length until the cost is at most `maxCost` (see `fitAttentionSequencesToCost`). */
export const fitSpargeSequencesToCost = fitAttentionSequencesToCost;

/** The attention reference's multiply-adds for a problem drawn here. */
export function spargeRandomCost(p: SpargeProblem): number {
  return attentionSequencesCost(attentionSequencesOf(p), p.nheadQ, 2 * p.hdimQ);
}

/** Per-head values drawn for the most heads (8); a problem keeps the first nheadQ. */
const perHeadArb = (values: readonly number[]) => fc.array(fc.constantFrom(...values), { minLength: 8, maxLength: 8 });

interface DrawnSelection {
  readonly topk: boolean;
  readonly perHead: boolean;
  readonly topkValues: readonly number[];
  readonly cdfValues: readonly number[];
}

/** Hyperparameters as drawn (undefined = the operator's default). */
interface DrawnParams {
  readonly selection: DrawnSelection;
  readonly simthreshd1: number | undefined;
  readonly isCausal: boolean;
  readonly int8: boolean;
  readonly smoothK: boolean | undefined;
  readonly attentionSink: boolean | undefined;
  readonly tailBlockRule: 'pooled' | 'upstreamFix' | undefined;
  readonly pvThreshold: number | undefined;
}

const paramsArb: fc.Arbitrary<DrawnParams> = fc.record({
  selection: fc.record({
    topk: fc.boolean(),
    perHead: fc.boolean(),
    topkValues: perHeadArb([0.1, 0.3, 0.5, 0.75, 1]),
    cdfValues: perHeadArb([0, 0.3, 0.6, 0.9, 0.99, 1]),
  }),
  // Block self-similarities lie in [0, 1]: ~1/rows for random rows, 1 for a one-row block.
  simthreshd1: fc.constantFrom(undefined, -0.1, 0.005, 0.05, 0.6),
  isCausal: fc.boolean(),
  int8: fc.boolean(),
  smoothK: fc.constantFrom(undefined, true, false),
  attentionSink: fc.constantFrom(undefined, true, false),
  tailBlockRule: fc.constantFrom(undefined, 'pooled' as const, 'upstreamFix' as const),
  pvThreshold: fc.constantFrom(undefined, 8, 12),
});

/** SpargeParams of a draw for `nhead` heads (a PV threshold only with a PV-skip vote); only the fields it sets. */
function paramsOf(d: DrawnParams, nhead: number, voting: boolean): SpargeParams {
  const s = d.selection;
  const values = (s.topk ? s.topkValues : s.cdfValues).slice(0, nhead);
  const selection = s.perHead ? values : values[0]!;
  const optional = {
    simthreshd1: d.simthreshd1,
    smoothK: d.smoothK,
    attentionSink: d.attentionSink,
    tailBlockRule: d.tailBlockRule,
    pvThreshold: voting ? d.pvThreshold : undefined,
  };
  const given = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined));
  return { ...(s.topk ? { topk: selection } : { cdfthreshd: selection }), ...given, isCausal: d.isCausal, int8: d.int8 };
}

interface DrawnSparge extends AttentionRandomHeads, AttentionRandomLayouts {
  readonly dtype: SpargeProblem['dtype'];
  readonly d: number;
  readonly sequences: SpargeRandomSequences;
  readonly lse: boolean;
  readonly params: DrawnParams;
  readonly pipeline: (typeof SPARGE_PIPELINES)[number];
  readonly pvMode: (typeof SPARGE_PV_MODES)[number];
}

/** The problem of a draw (LSE only without int8, as the runner spec), within the cost bound. */
function problemOf(d: DrawnSparge): SpargeProblem {
  const nheadQ = attentionRandomNheadQ(d);
  const s = fitSpargeSequencesToCost(d.sequences, nheadQ, 2 * d.d, SPARGE_RANDOM_MAX_COST);
  return {
    dtype: d.dtype,
    batch: s.batch,
    nheadQ,
    nheadK: d.nheadK,
    hdimQ: d.d,
    ...attentionProblemSequences(s),
    inputLayout: d.inputLayout,
    outputLayout: d.outputLayout,
    lse: d.lse && !d.params.int8,
    params: paramsOf(d.params, nheadQ, d.pvMode !== 'none'),
    pipeline: d.pipeline,
    pvMode: d.pvMode,
  };
}

/**
 * Valid Sparge problems: fp16/bf16, d 64/128, GQA (nheadK 1–2, ratio 1–4), batch mode (1–3 batches)
 * or group mode (1–4 sequences, empty ones included), lengths from `SPARGE_RANDOM_SEQLENS` (sq ≠ sk
 * allowed), both layouts for input and output, topk or cdf selection (one value or per head),
 * simthreshd1, causal, int8 Q·Kᵀ, smoothK, the attention sink, the tail-block rule, pipeline vsa or
 * jenga, PV vote none/warp/block with its threshold, LSE (not with int8). Postconditions
 * (randomSpargeConfig.spec.ts): each plans (`planSparge`), its block-map stage passes its checks, the
 * attention instance takes it, it costs at most `SPARGE_RANDOM_MAX_COST`, and survives a JSON round trip.
 */
export const spargeRandomProblemArb: fc.Arbitrary<SpargeProblem> = fc
  .record({
    dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
    d: fc.constantFrom(...SPARGE_HEAD_DIMS),
    ...attentionRandomHeadsFields,
    sequences: spargeRandomSequencesArb,
    ...attentionRandomLayoutsFields,
    lse: fc.boolean(),
    params: paramsArb,
    pipeline: fc.constantFrom(...SPARGE_PIPELINES),
    pvMode: fc.constantFrom(...SPARGE_PV_MODES),
  })
  .map(problemOf);

/** `runs` problems drawn from `seed` (the same list for the same arguments). */
export function spargeRandomProblems(seed: number, runs: number): SpargeProblem[] {
  return fc.sample(spargeRandomProblemArb, { seed, numRuns: runs });
}

/**
 * Every check `SpargeRunner.prepare` makes before it allocates, without a GPU: the plan
 * (`planSparge`: problem, hyperparameters, pipeline, PV mode, attention instance), the block-map
 * stage's pooling problem and selection config (as `SpargeBlockMapKernels.prepare` builds them),
 * and the attention instance's predicates. Returns the plan.
 * @throws SpargeArgumentError / FmhaFwdArgumentError naming the broken rule; ArgumentError `problem` listing the instance's unmet predicates.
 */
export function checkSpargeRandomProblem(problem: SpargeProblem): SpargePlan {
  const plan = planSparge(problem);
  const p = plan.attention;
  const r = plan.params;
  const group = p.mode === 'group';
  const sequences = group ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  const pool = checkSpargePoolProblem({
    dtype: p.dtype,
    headDim: p.hdimQ,
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK: p.nheadK,
    ...sequences,
    qStrides: p.qStrides,
    kStrides: p.kStrides,
    blockQ: r.blockQ,
    blockK: r.blockK,
    smoothK: r.smoothK,
    int8: r.int8,
    tailBlockRule: r.tailBlockRule,
  });
  checkSpargeSelectConfig({
    batch: pool.batch,
    nhead: pool.nhead,
    nheadK: pool.nheadK,
    headDim: pool.headDim,
    blockQ: r.blockQ,
    blockK: r.blockK,
    ...sequences,
    selection: r.selection,
    isCausal: r.isCausal,
    attentionSink: r.attentionSink,
  });
  const unmet = spargeFwdUnsupported(plan.instance, p);
  if (unmet.length > 0) throw new ArgumentError('problem', `${plan.instance.name} cannot run it: ${unmet.join('; ')}`);
  return plan;
}

/** `fp16 group 2x4/2h sq[17,0] sk[65,0] d64/64 bhsd>bshd lse vsa pv=warp topk 0.3/0.5 θ=0.05 int8 no-sink` — a test name. */
export function spargeRandomLabel(problem: SpargeProblem): string {
  const { attention: a, params: r } = planSparge(problem);
  const distinct = (xs: readonly number[]): string => [...new Set(xs)].join('/');
  const flags = [
    r.int8 ? 'int8' : '',
    r.smoothK ? '' : 'no-smoothK',
    r.attentionSink ? '' : 'no-sink',
    r.tailBlockRule === 'pooled' ? '' : r.tailBlockRule,
    a.pvMode === 'none' ? '' : `pv≥${distinct(r.pvThreshold)}`,
  ];
  return [
    formatFmhaFwdProblem(a),
    a.pipeline,
    `pv=${a.pvMode}`,
    `${r.selection} ${distinct(r.selectionValue)}`,
    `θ=${distinct(r.simthreshd1)}`,
    ...flags.filter(Boolean),
  ].join(' ');
}
