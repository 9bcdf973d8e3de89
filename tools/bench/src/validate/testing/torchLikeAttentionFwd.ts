import type { AttentionShape, KeyRange } from './attentionShape.ts';
import { roundInPlace } from './roundInPlace.ts';
import { dot } from './dot.ts';

/** O (rounded to the dtype) and the natural-log LSE (fp32) of a low-precision forward model. */
export interface LowPrecisionFwd {
  readonly o: Float64Array;
  readonly lse: Float64Array;
}

/**
 * A model of torch's low-precision attention forward: per row, the whole row's maximum m,
 * P = exp(S − m) in fp32, l = Σ P (fp32 values, before narrowing), P narrowed to `dtype` before
 * P·V (accumulated exactly), O = P·V / l rounded to `dtype`. A row without keys gives O = 0.
 * `vt` is V with each head transposed (`transposeHeads`).
 */
export function torchLikeAttentionFwd(
  scores: Float64Array,
  vt: Float64Array,
  shape: AttentionShape,
  dtype: 'fp16' | 'bf16',
  keys: KeyRange,
): LowPrecisionFwd {
  const { heads, sq, sk, d } = shape;
  const o = new Float64Array(heads * sq * d);
  const lse = new Float64Array(heads * sq).fill(-Infinity);
  const p = new Float64Array(sk);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < sq; i++) {
      const [lo, hi] = keys(i);
      if (hi <= lo) continue;
      const row = (h * sq + i) * sk;
      let m = -Infinity;
      for (let j = lo; j < hi; j++) m = Math.max(m, scores[row + j]!);
      let l = 0;
      for (let j = lo; j < hi; j++) {
        p[j] = Math.fround(Math.exp(scores[row + j]! - m));
        l += p[j]!;
      }
      roundInPlace(dtype, p.subarray(lo, hi));
      const out = (h * sq + i) * d;
      for (let c = 0; c < d; c++) o[out + c] = dot(p, lo, vt, (h * d + c) * sk + lo, hi - lo) / l;
      lse[h * sq + i] = Math.fround(m + Math.log(l));
    }
  }
  return { o: roundInPlace(dtype, o), lse };
}
