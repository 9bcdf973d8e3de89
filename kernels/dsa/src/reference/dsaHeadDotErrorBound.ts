// How far a GPU's 128-term e4m3 head dot product may be from the exact one: the model behind the logits tolerance.
import { DSA_INDEX_HEAD_DIM } from '../dsaShape.ts';
import { dsaExponentOf } from './dsaExponentOf.ts';

/**
 * How a GPU accumulates one head's 128-term e4m3 dot product q·k (selects {@link dsaHeadDotErrorBound}'s model):
 * - `fp32`: IEEE fp32 adds of the exact products, in any order (CUDA cores, a promotion after every product, or
 *   `mma.sync.m16n8k32 … .e4m3` on sm_90, measured on an H200 at ≤ 2% of this bound);
 * - `fp8TensorCore`: Hopper's `wgmma … .e4m3.e4m3` (SASS QGMMA): four k32 steps in ascending dim order into one
 *   accumulator of about 13 fraction bits (the "FP22" accumulator: DeepSeek-V3 report §3.5.2, SageAttention2: a
 *   step's products are aligned to the largest exponent and cut below it, the running sum keeps ~13 bits).
 *   DeepGEMM's indexer runs the 128 dims in one such chain. Measured on an H200 (driver 580, CUDA 13.0, 128×128×128
 *   probe, 655k dots): errors up to 60× the fp32 bound, so `fp32` would fail a wgmma kernel, and up to 45% of
 *   this model's bound (quantizer-like operands; 15–20% for full-entropy ones); small-integer operands exact.
 */
export type DsaDotAccumulation = 'fp32' | 'fp8TensorCore';

const STEP = 32;

/** 2^-16 · Σ_i |q_i·k_i|: the fp32 bound (n − 1)·2^-24·Σ|p_i| for n = 128 adds, with a factor 2 of margin. */
function fp32DotBound(q: Float64Array, qOffset: number, k: Float64Array, kOffset: number): number {
  let absolute = 0;
  for (let i = 0; i < DSA_INDEX_HEAD_DIM; i++) absolute += Math.abs(q[qOffset + i]! * k[kOffset + i]!);
  return 2 ** -16 * absolute;
}

/** The alignment unit of a step: 2^(⌊log2 m⌋ − 12), twice the ulp of 13 fraction bits below the largest term. */
const unitOf = (magnitude: number): number => 2 ** (dsaExponentOf(magnitude) - 12);

/** What truncating one product p at `unit` (toward −∞) may cost: 0 for a multiple of unit, else < unit, and ≤ p when p > 0. */
const productLoss = (p: number, unit: number): number => (p % unit === 0 ? 0 : p < 0 ? unit : Math.min(p, unit));

/** The fp8 tensor-core bound, step by step (see {@link dsaHeadDotErrorBound}). */
function tensorCoreDotBound(q: Float64Array, qOffset: number, k: Float64Array, kOffset: number): number {
  let exact = 0;
  let error = 0;
  for (let c = 0; c < DSA_INDEX_HEAD_DIM; c += STEP) {
    let biggest = Math.abs(exact) + error;
    for (let i = c; i < c + STEP; i++) biggest = Math.max(biggest, Math.abs(q[qOffset + i]! * k[kOffset + i]!));
    if (biggest === 0) continue;
    const unit = unitOf(biggest);
    let step = error === 0 && exact % unit === 0 ? 0 : unit;
    for (let i = c; i < c + STEP; i++) {
      const p = q[qOffset + i]! * k[kOffset + i]!;
      step += productLoss(p, unit);
      exact += p;
    }
    const magnitude = Math.abs(exact) + error + step;
    if (magnitude > 0 && (error + step > 0 || exact % unitOf(magnitude) !== 0)) step += unitOf(magnitude);
    error += step;
  }
  return error;
}

/**
 * A bound on |GPU dot − exact dot| for one head, from the exact products p_i = q_i·k_i (decoded e4m3 values;
 * products and their partial sums are exact in float64) under `accumulation`:
 * - `fp32`: 2^-16 · Σ_i |p_i| (twice the worst case of 128 fp32 adds in any order).
 * - `fp8TensorCore`: E after the four k32 steps c (dims 32c … 32c + 31, in order), starting from E = 0, where E bounds
 *   |GPU accumulator − exact prefix sum S|. In a step, M = max(|S| + E, max_{i∈c} |p_i|) bounds every addend and
 *   u = 2^(⌊log2 M⌋ − 12) is twice the unit of 13 fraction bits below the largest one; the step adds
 *   (a) u for the incoming accumulator, unless E = 0 and S is a multiple of u (then it is exact there);
 *   (b) per product: 0 if p_i is a multiple of u, else u if p_i < 0 (truncation toward −∞, sign-fill shift) or
 *       min(p_i, u) if p_i > 0;
 *   (c) for the step's result kept to 13 fraction bits, v = 2^(⌊log2(|S'| + E')⌋ − 12) with S' the new prefix and
 *       E' = E plus (a) and (b), unless E' = 0 and S' is a multiple of v (exact then).
 *   Steps with M = 0 add nothing. So small-integer data (every sum exactly representable) gets bound 0;
 *   full-entropy operands get about 2^-8 of Σ|p_i| (at most 2^-6), quantized normal keys about 2^-12 (at most 2^-8.6).
 * Used by {@link dsaIndexerPrefillReferenceWithBound} and {@link dsaIndexerDecodeReferenceWithBound}.
 */
export function dsaHeadDotErrorBound(
  q: Float64Array,
  qOffset: number,
  k: Float64Array,
  kOffset: number,
  accumulation: DsaDotAccumulation,
): number {
  return accumulation === 'fp32' ? fp32DotBound(q, qOffset, k, kOffset) : tensorCoreDotBound(q, qOffset, k, kOffset);
}
