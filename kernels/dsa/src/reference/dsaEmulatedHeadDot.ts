// Executable models of how a GPU accumulates a head dot product (internal: the specs check the error bound against them).
import { DSA_INDEX_HEAD_DIM } from '../dsaShape.ts';
import { dsaExponentOf } from './dsaExponentOf.ts';
import type { DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';

const STEP = 32;
/** Fraction bits the modelled fp8 tensor core keeps (the "FP22" accumulator: 13). */
const TENSOR_CORE_BITS = 13;

/** x with its significand truncated toward zero to `bits` fraction bits. */
function truncateSignificand(x: number, bits: number): number {
  if (x === 0) return x;
  const unit = 2 ** (dsaExponentOf(x) - bits);
  return Math.trunc(x / unit) * unit;
}

/** One k32 step: the accumulator and 32 products aligned to the largest exponent, floored at 13 fraction bits, summed, truncated. */
function tensorCoreStep(acc: number, q: Float64Array, qOffset: number, k: Float64Array, kOffset: number): number {
  const terms = [acc];
  for (let i = 0; i < STEP; i++) terms.push(q[qOffset + i]! * k[kOffset + i]!);
  const largest = terms.reduce((m, t) => (t === 0 ? m : Math.max(m, dsaExponentOf(t))), Number.NEGATIVE_INFINITY);
  if (largest === Number.NEGATIVE_INFINITY) return 0;
  const unit = 2 ** (largest - TENSOR_CORE_BITS);
  const sum = terms.reduce((s, t) => s + Math.floor(t / unit) * unit, 0);
  return truncateSignificand(sum, TENSOR_CORE_BITS);
}

/**
 * A head dot product as a GPU under `accumulation` might compute it: `fp32` adds the exact products in
 * descending dim order with fp32 rounding after every add; `fp8TensorCore` runs four k32 steps (ascending), each
 * aligning the running accumulator and its 32 products to their largest exponent, flooring every term at 13
 * fraction bits (sign-fill right shift), and truncating the sum to 13 fraction bits (DeepSeek-V3 §3.5.2's
 * description). Not a bit-exact model of any chip (an H200's wgmma agrees with it in few elements and shows no
 * bias, where this floors): a plausible worst-leaning one for exercising the bound on the CPU.
 */
export function dsaEmulatedHeadDot(
  q: Float64Array,
  qOffset: number,
  k: Float64Array,
  kOffset: number,
  accumulation: DsaDotAccumulation,
): number {
  let acc = 0;
  if (accumulation === 'fp32') {
    for (let i = DSA_INDEX_HEAD_DIM - 1; i >= 0; i--) acc = Math.fround(acc + q[qOffset + i]! * k[kOffset + i]!);
    return acc;
  }
  for (let c = 0; c < DSA_INDEX_HEAD_DIM; c += STEP) acc = tensorCoreStep(acc, q, qOffset + c, k, kOffset + c);
  return acc;
}
