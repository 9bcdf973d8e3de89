import type { AttentionShape } from './attentionShape.ts';
import { dot } from './dot.ts';

/**
 * The scaled logits S[h][i][j] = scale·⟨q_hi, k_hj⟩ rounded to fp32 (what the low-precision
 * models share: an fp32 Q·Kᵀ), heads × sq × sk.
 */
export function attentionScores(q: Float64Array, k: Float64Array, shape: AttentionShape): Float64Array {
  const { heads, sq, sk, d, scale } = shape;
  const s = new Float64Array(heads * sq * sk);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < sq; i++) {
      const qi = (h * sq + i) * d;
      const out = (h * sq + i) * sk;
      for (let j = 0; j < sk; j++) s[out + j] = Math.fround(scale * dot(q, qi, k, (h * sk + j) * d, d));
    }
  }
  return s;
}
