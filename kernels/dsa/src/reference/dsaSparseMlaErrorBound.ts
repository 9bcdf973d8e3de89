// The per-element error bound of a sparse MLA kernel's outputs against the float64 reference.
//
// Model of the kernel's arithmetic (FlashMLA's: bf16 inputs, bf16 MMAs with fp32 accumulation):
// 1. score s'_j = fp32 sum of the dQk exact bf16 products q_i·k_ji, times sm_scale (·log2 e for base 2), minus the running max:
//    |s'_j − s_j| ≤ δ = γ(dQk)·A + 8u₃₂·S, A = max_j sm_scale·Σ_i |q_i k_ji|, S = max_j |s_j| (γ(n) = n·u₃₂ / (1 − n·u₃₂)).
// 2. w'_j = exp2 of that (relative error ε = 2^-21, ex2.approx and its argument's rounding); normalized weights
//    therefore satisfy |p'_j − p_j| ≤ ρ·p_j with ρ = e^{2δ}·(1 + ε)/(1 − ε) − 1.
// 3. P rounded to bf16 for the P·V MMA while the row sum l uses the fp32 weights (relative u₁₆ = 2^-8 per weight),
//    fp32 sums of l and of P·V over n valid tokens with up to n rescalings by a new running max (γ(2n) each), one fp32
//    division (u₃₂): |o'_d − o_d| ≤ β·V_d, β = (1 + ρ)(1 + u₁₆)(1 + γ(2n))²(1 + u₃₂) − 1, V_d = Σ_j p_j |v_jd|.
// 4. lse' = m' + ln l': |lse' − lse| ≤ δ + 2ε + 2γ(2n) + 2^-21 (lg2.approx) + 8u₃₂·(|lse| + S); max: |max' − max| ≤ δ.
// 5. the sink factor f = σ(lse − sink) from lse': |f' − f| ≤ min(f, 1 − f)·(e^{δ_lse} − 1) + 4u₃₂.
// 6. out = bf16(f'·o'): |out − f·o| ≤ E + u₁₆·(|f·o| + E) + u₃₂·|f·o|, E = f·β·V_d + |f' − f|·(|o_d| + β·V_d) + u₃₂·|f·o_d|.
// (One u₃₂ in δ, in the lse term and in step 6 covers the reference's own rounding of its float64 results to float32.)
// Every term is a worst case (no cancellation assumed), so a correct kernel stays inside; the bf16 terms dominate
// (about 2^-7 of V_d), which is still tight enough that a wrong index, a dropped token, a wrong scale or a swapped
// head moves out, lse or max_logits past it wherever the affected token carries more than about 1% of a row's weight.

/** Unit roundoff of fp32 (round to nearest). */
const U32 = 2 ** -24;
/** Unit roundoff of bf16 (round to nearest). */
export const DSA_SPARSE_MLA_BF16_ROUNDOFF = 2 ** -8;
/** Relative error allowed for each exponential and for lg2 (ex2.approx / lg2.approx and their argument's rounding). */
const EXP_ERROR = 2 ** -21;

function gamma(n: number): number {
  return (n * U32) / (1 - n * U32);
}

/** What the bound of one (query, head) row depends on. */
export interface DsaSparseMlaRowStats {
  /** Valid tokens in the row (duplicates counted). */
  readonly valid: number;
  /** dQk: products summed per score. */
  readonly dims: number;
  /** max_j sm_scale · Σ_i |q_i · k_ji| over the valid tokens. */
  readonly dotAbsMax: number;
  /** max_j |s_j| (scores after sm_scale). */
  readonly scoreAbsMax: number;
  /** The exact lse (natural log). */
  readonly lse: number;
  /** The exact sink factor e^lse / (e^lse + e^sink) (1 without a sink). */
  readonly sinkFactor: number;
}

/** The row-level terms of the bound (see the file comment for their derivation). */
export interface DsaSparseMlaRowBound {
  /** δ: bound on each score's error. */
  readonly score: number;
  /** β: out_d before the sink and the bf16 rounding is within β·Σ_j p_j |v_jd| of the exact value. */
  readonly pv: number;
  /** Bound on |lse' − lse|. */
  readonly lse: number;
  /** Bound on |max' − max|. */
  readonly maxLogits: number;
  /** Bound on the kernel's sink factor error |f' − f| (0 without a sink). */
  readonly sinkFactor: number;
  /** The exact sink factor f. */
  readonly factor: number;
}

/** The row-level bound of a non-empty row (an empty row's outputs are exact: 0, +∞, −∞). */
export function dsaSparseMlaRowBound(stats: DsaSparseMlaRowStats): DsaSparseMlaRowBound {
  const g = gamma(2 * stats.valid);
  const score = gamma(stats.dims) * stats.dotAbsMax + 8 * U32 * stats.scoreAbsMax;
  const rho = Math.exp(2 * score) * ((1 + EXP_ERROR) / (1 - EXP_ERROR)) - 1;
  const pv = (1 + rho) * (1 + DSA_SPARSE_MLA_BF16_ROUNDOFF) * (1 + g) ** 2 * (1 + U32) - 1;
  const lse = score + 2 * EXP_ERROR + 2 * g + EXP_ERROR + 8 * U32 * (Math.abs(stats.lse) + stats.scoreAbsMax);
  const f = stats.sinkFactor;
  const sinkFactor = f === 1 ? 0 : Math.min(f, 1 - f) * Math.expm1(lse) + 4 * U32;
  return { score, pv, lse, maxLogits: score, sinkFactor, factor: f };
}

/**
 * The bound on one bf16 output element: |out − f·o| ≤ E + u₁₆·(|f·o| + E) + u₃₂·|f·o|, with
 * E = f·β·V + |f' − f|·(|o| + β·V) + u₃₂·|f·o|,
 * where o is the exact output before the sink and V = Σ_j p_j |v_jd| (0 when every valid v_jd is 0: then out must be 0 exactly).
 */
export function dsaSparseMlaOutBound(row: DsaSparseMlaRowBound, o: number, v: number): number {
  const spread = row.pv * v;
  const fo = Math.abs(row.factor * o);
  const e = row.factor * spread + row.sinkFactor * (Math.abs(o) + spread) + U32 * fo;
  return e + DSA_SPARSE_MLA_BF16_ROUNDOFF * (fo + e) + U32 * fo;
}
