// example_sparge's plan: the flags' Sparge problem, planned; its one-line description and dense-equivalent FLOPs.
import { planSparge, type SpargePlan, type SpargeProblem } from '@tilekit/kernel-sparge';
import { parsePerHead, SPARGE_EXAMPLE_DEFAULT_TOPK, type SpargeExampleArgs } from './spargeExampleFlags.ts';

/**
 * The Sparge problem the flags describe (batch mode, packed bhsd, LSE written for validation).
 * Exactly one of -topk / -cdfthreshd is passed on; with neither written, topk = 0.4. Range and
 * per-head-length rules are the library's (planSparge throws SpargeArgumentError for them).
 * @throws ArgParseError for malformed values (the parser already rejects them, with bounds such as -repeat ≥ 1).
 */
export function spargeProblemFromArgs(args: SpargeExampleArgs): SpargeProblem {
  const cdf = parsePerHead('cdfthreshd', args.get('cdfthreshd'));
  const topk = args.given('topk') ? parsePerHead('topk', args.get('topk')) : cdf === undefined ? SPARGE_EXAMPLE_DEFAULT_TOPK : undefined;
  const simthreshd1 = parsePerHead('simthreshd1', args.get('simthreshd1'));
  const pvThreshold = parsePerHead('pv_threshold', args.get('pv_threshold'));
  return {
    dtype: args.get('prec'),
    batch: args.get('b'),
    nheadQ: args.get('h'),
    ...(args.get('h_k') !== 0 ? { nheadK: args.get('h_k') } : {}),
    hdimQ: args.get('d'),
    seqlenQ: args.get('s'),
    seqlenK: args.get('s_k') !== 0 ? args.get('s_k') : args.get('s'),
    // int8 logits are relative to the smoothed K: the runner offers no LSE then (it would be off by q·km·scale).
    lse: !(args.get('int8') && args.get('smooth_k')),
    pipeline: args.get('pipeline'),
    pvMode: args.get('pv_mode'),
    params: {
      ...(topk !== undefined ? { topk } : {}),
      ...(cdf !== undefined ? { cdfthreshd: cdf } : {}),
      ...(simthreshd1 !== undefined ? { simthreshd1 } : {}),
      ...(pvThreshold !== undefined ? { pvThreshold } : {}),
      isCausal: args.get('causal'),
      smoothK: args.get('smooth_k'),
      attentionSink: args.get('sink'),
      int8: args.get('int8'),
    },
  };
}

/**
 * Plans the flags' problem (planSparge: hyperparameters, shape, pipeline, PV mode, instance).
 * @throws ArgParseError for malformed flags; SpargeArgumentError / FmhaFwdArgumentError (typed,
 * naming the argument and the rule) for values that make no Sparge problem.
 */
export function planSpargeExample(args: SpargeExampleArgs): SpargePlan {
  return planSparge(spargeProblemFromArgs(args));
}

/** A one-line description of a planned problem. */
export function formatSpargeProblem(plan: SpargePlan): string {
  const p = plan.attention;
  const r = plan.params;
  const per = (xs: readonly number[]): string => (xs.every((x) => x === xs[0]) ? String(xs[0]) : `[${xs.join(',')}]`);
  const seq = p.mode === 'batch' ? `${p.seqlenQ}x${p.seqlenK}` : 'group';
  return [
    `${p.dtype} ${p.pipeline} b${p.batch} h${p.nheadQ}${p.nheadK !== p.nheadQ ? `/${p.nheadK}` : ''} s${seq} d${p.hdimQ}`,
    `${r.selection === 'topk' ? 'topk' : 'cdfthreshd'} ${per(r.selectionValue)}, simthreshd1 ${per(r.simthreshd1)}`,
    `pv_mode ${p.pvMode}${p.pvMode !== 'none' ? ` (threshold ${per(r.pvThreshold)})` : ''}`,
    `causal ${r.isCausal ? 1 : 0}, smooth_k ${r.smoothK ? 1 : 0}, sink ${r.attentionSink ? 1 : 0}, int8 ${r.int8 ? 1 : 0}`,
    `blocks ${r.blockQ}x${r.blockK} (grid ${p.qBlocks}x${p.kBlocks})`,
  ].join(', ');
}

/** The dense-equivalent FLOPs of the attention: 4·b·h·sq·sk·d, halved when causal. */
export function spargeDenseFlops(plan: SpargePlan): number {
  const p = plan.attention;
  const sq = p.mode === 'batch' ? p.seqlenQ : 0;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  return (4 * p.batch * p.nheadQ * sq * sk * p.hdimQ) / (plan.params.isCausal ? 2 : 1);
}
