import { decode } from '@tilekit/numeric';
import { makeGenericAttentionMask } from '../mask/genericAttentionMask.ts';
import { attentionScoreAt } from './attentionScoreModifier.ts';
import {
  attentionLseIndex,
  attentionRowOffset,
  resolveAttentionFwdArgs,
  type AttentionFwdArgs,
  type AttentionOperand,
} from './attentionFwdArgs.ts';

/** O (float64, in `oStrides`) and LSE (natural log) of the naive formula. */
export interface NaiveAttentionFwdResult {
  readonly o: Float64Array;
  readonly lse: Float64Array;
}

function element(op: AttentionOperand, offset: number): number {
  const raw = op.data[offset]!;
  return op.dtype === 'fp32' ? raw : decode(op.dtype, raw);
}

/**
 * The textbook formula, one output element at a time, as an independent check of
 * `referenceAttentionFwd`: for every (b, h, i), every key j of the batch that `isMasked` keeps
 * contributes e_j = exp(scale·⟨q_i, k_j⟩ − max), O = Σ e_j·v_j / Σ e_j, LSE = max + ln Σ e_j; no key
 * kept → O = 0, LSE = −∞. Each element is decoded where it is used; no blocking, no key ranges.
 * Slow (O(b·h·sq·sk·(d + dv)) decodes): for small shapes in tests.
 */
export function naiveAttentionFwd(args: AttentionFwdArgs): NaiveAttentionFwdResult {
  const a = resolveAttentionFwdArgs(args);
  const o = new Float64Array(a.oElements);
  const lse = new Float64Array(a.nheadQ * a.rowsQ * (a.groupMode ? 1 : a.batch));
  for (let b = 0; b < a.batch; b++) {
    const [sq, sk] = [a.seqlensQ[b]!, a.seqlensK[b]!];
    const mask = makeGenericAttentionMask(a.mask, sq, sk);
    for (let h = 0; h < a.nheadQ; h++) {
      const hk = Math.floor(h / (a.nheadQ / a.nheadK));
      const score = attentionScoreAt(a.scoreModifier, h, sq, sk);
      for (let i = 0; i < sq; i++) {
        const qi = attentionRowOffset(a, args.q.strides, a.rowStartsQ, b, h, i);
        const logits: number[] = [];
        const keys: number[] = [];
        for (let j = 0; j < sk; j++) {
          if (mask.isMasked(i, j)) continue;
          const kj = attentionRowOffset(a, args.k.strides, a.rowStartsK, b, hk, j);
          let dot = 0;
          for (let d = 0; d < a.hdimQ; d++) dot += element(args.q, qi + d) * element(args.k, kj + d);
          logits.push(score.logit(a.scale * dot, i, j));
          keys.push(j);
        }
        const out = attentionRowOffset(a, a.oStrides, a.rowStartsQ, b, h, i);
        if (keys.length === 0) {
          lse[attentionLseIndex(a, b, h, i)] = -Infinity;
          continue; // O stays 0
        }
        const max = logits.reduce((x, y) => (y > x ? y : x), -Infinity);
        const weights = logits.map((l) => Math.exp(l - max));
        const total = weights.reduce((x, y) => x + y, 0);
        for (let d = 0; d < a.hdimV; d++) {
          let num = 0;
          keys.forEach((j, n) => {
            num += weights[n]! * element(args.v, attentionRowOffset(a, args.v.strides, a.rowStartsK, b, hk, j) + d);
          });
          o[out + d] = num / total;
        }
        lse[attentionLseIndex(a, b, h, i)] = max + Math.log(total);
      }
    }
  }
  return { o, lse };
}
