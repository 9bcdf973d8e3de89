import type { AttentionShape } from './attentionShape.ts';
import { dot } from './dot.ts';
import { roundInPlace } from './roundInPlace.ts';
import { transposeHeads } from './transposeHeads.ts';

/** dQ, dK, dV (heads × rows × d), rounded to the dtype. */
export interface AttentionGrads {
  readonly dq: Float64Array;
  readonly dk: Float64Array;
  readonly dv: Float64Array;
}

/** The backward's inputs as values, heads × rows × d. */
export interface AttentionBwdValues {
  readonly q: Float64Array;
  readonly k: Float64Array;
  readonly v: Float64Array;
  readonly dO: Float64Array;
}

/** The forward a backward model reads (its own low-precision O and LSE), and how it differs from torch's. */
export interface LowPrecisionBwdOptions {
  readonly o: Float64Array;
  readonly lse: Float64Array;
  /** P as 2^(S·log2 e − LSE·log2 e) in fp32 (our kernels) instead of exp(S − LSE). */
  readonly exp2?: boolean;
  /** dK/dV sums over each tile of this many query rows are added to fp32 accumulators (default: one sum). */
  readonly rowTile?: number;
}

/** Head h's P and dS = P∘(dP − D) (sq × sk, fp32 values, not yet narrowed). */
function probabilities(
  scores: Float64Array,
  x: AttentionBwdValues,
  shape: AttentionShape,
  h: number,
  options: LowPrecisionBwdOptions,
): { p: Float64Array; ds: Float64Array } {
  const { sq, sk, d } = shape;
  const p = new Float64Array(sq * sk);
  const ds = new Float64Array(sq * sk);
  for (let i = 0; i < sq; i++) {
    const qi = (h * sq + i) * d;
    const di = Math.fround(dot(x.dO, qi, options.o, qi, d));
    const lse = options.lse[h * sq + i]!;
    const lse2 = Math.fround(lse * Math.LOG2E);
    for (let j = 0; j < sk; j++) {
      const s = scores[(h * sq + i) * sk + j]!;
      const pij = Math.fround(options.exp2 ? 2 ** (Math.fround(s * Math.LOG2E) - lse2) : Math.exp(s - lse));
      p[i * sk + j] = pij;
      ds[i * sk + j] = Math.fround(pij * (Math.fround(dot(x.dO, qi, x.v, (h * sk + j) * d, d)) - di));
    }
  }
  return { p, ds };
}

/**
 * A low-precision attention backward without a mask: P recomputed from LSE in fp32,
 * D_i = ⟨dO_i, O_i⟩ from the forward's narrowed O, dP = dO·Vᵀ, dS = P∘(dP − D); P and dS narrowed to
 * `dtype` before dV = Pᵀ·dO, dK = scale·dSᵀ·Q, dQ = scale·dS·K; outputs rounded to `dtype`.
 */
export function lowPrecisionAttentionBwd(
  scores: Float64Array,
  x: AttentionBwdValues,
  shape: AttentionShape,
  dtype: 'fp16' | 'bf16',
  options: LowPrecisionBwdOptions,
): AttentionGrads {
  const { heads, sq, sk, d, scale } = shape;
  const rowTile = options.rowTile ?? sq;
  const [qt, kt, dOt] = [transposeHeads(x.q, heads, sq, d), transposeHeads(x.k, heads, sk, d), transposeHeads(x.dO, heads, sq, d)];
  const dq = new Float64Array(heads * sq * d);
  const dk = new Float64Array(heads * sk * d);
  const dv = new Float64Array(heads * sk * d);
  for (let h = 0; h < heads; h++) {
    const { p, ds } = probabilities(scores, x, shape, h, options);
    roundInPlace(dtype, p);
    roundInPlace(dtype, ds);
    for (let i = 0; i < sq; i++) for (let c = 0; c < d; c++) dq[(h * sq + i) * d + c] = scale * dot(ds, i * sk, kt, (h * d + c) * sk, sk);
    const [pt, dst] = [transposeHeads(p, 1, sq, sk), transposeHeads(ds, 1, sq, sk)];
    for (let j = 0; j < sk; j++) {
      for (let c = 0; c < d; c++) {
        let sumK = 0;
        let sumV = 0;
        for (let i0 = 0; i0 < sq; i0 += rowTile) {
          const n = Math.min(rowTile, sq - i0);
          sumK = Math.fround(sumK + dot(dst, j * sq + i0, qt, (h * d + c) * sq + i0, n));
          sumV = Math.fround(sumV + dot(pt, j * sq + i0, dOt, (h * d + c) * sq + i0, n));
        }
        dk[(h * sk + j) * d + c] = scale * sumK;
        dv[(h * sk + j) * d + c] = sumV;
      }
    }
  }
  return { dq: roundInPlace(dtype, dq), dk: roundInPlace(dtype, dk), dv: roundInPlace(dtype, dv) };
}
