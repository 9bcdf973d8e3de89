// example_sparge's attention check: GPU O/LSE against a reference, within the forward tolerance (and the PV-skip slack).
import { attentionFwdTolerance } from '@tilekit/fmha';
import type { SpargeAttentionResult, SpargePlan } from '@tilekit/kernel-sparge';
import type { SpargeCpuReference } from './spargeExampleReference.ts';

/** The largest |x| (0 for none). */
function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

/** Compares GPU O/LSE (decoded) with a reference; tolerance attentionFwdTolerance, widened by the PV-skip slack when skipping is modeled. */
export function compareSpargeAttention(
  plan: SpargePlan,
  values: SpargeCpuReference['attentionValues'],
  ref: SpargeAttentionResult,
  o: ArrayLike<number>,
  lse: ArrayLike<number> | undefined,
): { readonly ok: boolean; readonly message: string } {
  const { tol, slack } = spargeAttentionTolerance(plan, values);
  const p = plan.attention;
  const d = p.hdimQ;
  let bad = 0;
  let first = '';
  let worstO = 0;
  let worstL = 0;
  for (let r = 0; r < ref.lse.length; r++) {
    const wantL = ref.lse[r]!;
    const gotL = lse === undefined ? wantL : lse[r]!;
    const okL = wantL === -Infinity ? gotL === -Infinity : Math.abs(gotL - wantL) <= tol.lse.atol + tol.lse.rtol * Math.abs(wantL) + slack;
    if (wantL !== -Infinity) worstL = Math.max(worstL, Number.isNaN(gotL) ? Infinity : Math.abs(gotL - wantL));
    if (!okL) {
      bad++;
      first ||= `LSE[row ${r}] = ${gotL}, reference ${wantL}`;
    }
    for (let e = 0; e < d; e++) {
      const want = ref.o[r * d + e]!;
      const err = Math.abs(o[r * d + e]! - want);
      worstO = Math.max(worstO, Number.isNaN(err) ? Infinity : err);
      if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want) + slack)) {
        bad++;
        first ||= `O[row ${r} d${e}] = ${o[r * d + e]}, reference ${want}`;
      }
    }
  }
  const slackText = slack > 0 ? `, PV-skip slack ${slack.toExponential(2)}` : '';
  const oText = `max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}, rtol ${tol.o.rtol.toExponential(2)}${slackText})`;
  const message =
    `O/LSE: ${ref.o.length} + ${ref.lse.length} values, ${oText}, LSE ${worstL.toExponential(2)}; ` +
    `${bad} outside${first ? `; first: ${first}` : ''}`;
  return { ok: bad === 0, message };
}

/**
 * The forward tolerance of a plan's attention (attentionFwdTolerance of its dtype, key length, head
 * dim, scale and input magnitudes), and the PV-skip slack when skipping is modeled: the GPU's fp32
 * vote may differ from the float64 model only where the skipped weights are ≤ 2^−threshold of the row max.
 */
function spargeAttentionTolerance(
  plan: SpargePlan,
  values: SpargeCpuReference['attentionValues'],
): { readonly tol: ReturnType<typeof attentionFwdTolerance>; readonly slack: number } {
  const p = plan.attention;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  const tol = attentionFwdTolerance({
    dtype: p.dtype,
    seqlenK: sk,
    hdimQ: p.hdimQ,
    scale: p.scale,
    maxAbsQ: maxAbs(values.q),
    maxAbsK: maxAbs(values.k),
    maxAbsV: maxAbs(values.v),
  });
  const modeled = p.pvMode !== 'none' && plan.params.pvThreshold.some((t) => t !== Infinity);
  const slack = modeled ? Math.max(...plan.params.pvThreshold.map((t) => 2 ** -t)) * maxAbs(values.v) * p.kBlocks : 0;
  return { tol, slack };
}
