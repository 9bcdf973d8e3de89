import { referenceAttentionBwd, referenceAttentionFwd } from '@tilekit/fmha';
import { attentionArgs } from './attentionArgs.ts';
import { errorStats, referenceStats } from '../errorStats.ts';
import type { OutputEvidence } from '../judgeOutputs.ts';
import { attentionInputs } from './attentionInputs.ts';
import { attentionScores } from './attentionScores.ts';
import { allKeys, type AttentionShape } from './attentionShape.ts';
import { lowPrecisionAttentionBwd, type AttentionGrads } from './lowPrecisionAttentionBwd.ts';
import { tiledAttentionFwd } from './tiledAttentionFwd.ts';
import { torchLikeAttentionFwd } from './torchLikeAttentionFwd.ts';
import { KEY_TILE } from './attentionFwdCase.ts';
import { transposeHeads } from './transposeHeads.ts';

/** Query rows per fp32 accumulation step of dK/dV in "our" backward model. */
export const QUERY_TILE = 64;

/**
 * A synthetic backward case without a mask: the fp32 reference (@tilekit/fmha's float64 CPU
 * backward from the float64 forward, rounded to fp32), torch's model (from torch's low-precision
 * forward) and ours (exp2, tiled dK/dV sums, from our tiled forward), and the judge's evidence for
 * any gradients.
 */
export interface AttentionBwdCase {
  readonly reference: AttentionGrads;
  readonly torch: AttentionGrads;
  readonly ours: AttentionGrads;
  evidence(grads: AttentionGrads): Record<keyof AttentionGrads, OutputEvidence>;
}

export function attentionBwdCase(dtype: 'fp16' | 'bf16', shape: AttentionShape, seed: number): AttentionBwdCase {
  const inputs = attentionInputs(dtype, shape, seed);
  const args = attentionArgs(shape, inputs, false);
  const fwd = referenceAttentionFwd(args);
  const ref = referenceAttentionBwd({
    ...args,
    o: { dtype: 'fp32', data: fwd.o, strides: inputs.dO.operand.strides },
    dO: inputs.dO.operand,
    lse: fwd.lse,
  });
  const values = { q: inputs.q.values, k: inputs.k.values, v: inputs.v.values, dO: inputs.dO.values };
  const scores = attentionScores(values.q, values.k, shape);
  const keys = allKeys(shape.sk);
  const vt = transposeHeads(values.v, shape.heads, shape.sk, shape.d);
  const torchFwd = torchLikeAttentionFwd(scores, vt, shape, dtype, keys);
  const oursFwd = tiledAttentionFwd(scores, vt, shape, dtype, keys, { tile: KEY_TILE });
  const reference = { dq: Float64Array.from(ref.dq), dk: Float64Array.from(ref.dk), dv: Float64Array.from(ref.dv) };
  const torch = lowPrecisionAttentionBwd(scores, values, shape, dtype, { o: torchFwd.o, lse: torchFwd.lse });
  const ours = lowPrecisionAttentionBwd(scores, values, shape, dtype, { o: oursFwd.o, lse: oursFwd.lse, exp2: true, rowTile: QUERY_TILE });
  const one = (name: keyof AttentionGrads, got: Float64Array): OutputEvidence => ({
    ours: errorStats(got, reference[name]),
    torch: errorStats(torch[name], reference[name]),
    reference: referenceStats(reference[name]),
    precision: dtype,
  });
  return {
    reference,
    torch,
    ours,
    evidence: (grads) => ({ dq: one('dq', grads.dq), dk: one('dk', grads.dk), dv: one('dv', grads.dv) }),
  };
}
