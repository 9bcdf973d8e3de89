import { causalBottomRight, noMask, type AttentionFwdArgs } from '@tilekit/fmha';
import type { attentionInputs } from './attentionInputs.ts';
import type { AttentionShape } from './attentionShape.ts';

/** @tilekit/fmha's reference arguments for one batch of a synthetic case (causal: bottom-right). */
export function attentionArgs(shape: AttentionShape, inputs: ReturnType<typeof attentionInputs>, causal: boolean): AttentionFwdArgs {
  return {
    batch: 1,
    nheadQ: shape.heads,
    hdimQ: shape.d,
    hdimV: shape.d,
    seqlenQ: shape.sq,
    seqlenK: shape.sk,
    q: inputs.q.operand,
    k: inputs.k.operand,
    v: inputs.v.operand,
    scale: shape.scale,
    mask: causal ? causalBottomRight : noMask,
  };
}
