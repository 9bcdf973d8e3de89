import { referenceAttentionFwd } from '@tilekit/fmha';
import { attentionArgs } from './attentionArgs.ts';
import { errorStats, referenceStats } from '../errorStats.ts';
import type { OutputEvidence } from '../judgeOutputs.ts';
import { attentionInputs } from './attentionInputs.ts';
import { attentionScores } from './attentionScores.ts';
import { once } from './once.ts';
import { allKeys, causalKeys, type AttentionShape, type KeyRange } from './attentionShape.ts';
import { tiledAttentionFwd } from './tiledAttentionFwd.ts';
import { torchLikeAttentionFwd } from './torchLikeAttentionFwd.ts';
import { transposeHeads } from './transposeHeads.ts';

/** Keys per step of "our" tiled model. */
export const KEY_TILE = 128;

/**
 * A synthetic forward case, without a mask or causal (sq = sk): the fp32 reference (@tilekit/fmha's
 * float64 CPU reference, rounded to fp32), torch's low-precision model and ours (each computed on
 * first use, once), "our" model under other key ranges or with a key tile left out (bug models),
 * and the evidence the judge gets for any O.
 */
export interface AttentionFwdCase {
  readonly dtype: 'fp16' | 'bf16';
  readonly shape: AttentionShape;
  readonly causal: boolean;
  reference(): Float32Array;
  torch(): Float64Array;
  ours(): Float64Array;
  /** Our tiled model with other key ranges (default the case's) and optionally key tile `skipTile` left out. */
  oursWith(keys?: KeyRange, skipTile?: number): Float64Array;
  evidence(o: ArrayLike<number>): OutputEvidence;
}

export function attentionFwdCase(dtype: 'fp16' | 'bf16', shape: AttentionShape, causal: boolean, seed: number): AttentionFwdCase {
  const inputs = attentionInputs(dtype, shape, seed);
  const { q, k, v } = inputs;
  const scores = once(() => attentionScores(q.values, k.values, shape));
  const vt = once(() => transposeHeads(v.values, shape.heads, shape.sk, shape.d));
  const keys = causal ? causalKeys(shape.sk) : allKeys(shape.sk);
  const reference = once(() => referenceAttentionFwd(attentionArgs(shape, inputs, causal)).o);
  const torch = once(() => torchLikeAttentionFwd(scores(), vt(), shape, dtype, keys).o);
  const oursWith = (with_: KeyRange = keys, skipTile?: number): Float64Array =>
    tiledAttentionFwd(scores(), vt(), shape, dtype, with_, { tile: KEY_TILE, skipTile }).o;
  return {
    dtype,
    shape,
    causal,
    reference,
    torch,
    ours: once(() => oursWith()),
    oursWith,
    evidence: (o) => ({
      ours: errorStats(o, reference()),
      torch: errorStats(torch(), reference()),
      reference: referenceStats(reference()),
      precision: dtype,
    }),
  };
}
