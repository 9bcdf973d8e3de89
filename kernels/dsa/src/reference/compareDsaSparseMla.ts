// Comparing a GPU sparse MLA result with the float64 reference under the per-element error bound.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaBf16Values } from './dsaBf16Bits.ts';
import { dsaCheckLength } from './dsaCheckLength.ts';
import type { DsaSparseMlaResultWithBound } from './dsaSparseMlaReference.ts';

/** A kernel's outputs: out as bf16 bit patterns (what the kernel stores) or float32 values, lse, optionally maxLogits. */
export interface DsaSparseMlaActual {
  readonly out: Uint16Array | Float32Array;
  readonly lse: Float32Array;
  /** Absent for a kernel that does not return it (FlashMLA's decode): then not compared. */
  readonly maxLogits?: Float32Array;
}

/** What {@link compareDsaSparseMla} found in one output array. */
export interface DsaSparseMlaArrayComparison {
  /** Elements compared. */
  readonly checked: number;
  /** Elements outside the bound, or breaking an exact convention (empty rows: out 0, lse +∞, max −∞; NaN anywhere). */
  readonly failures: number;
  /** The element with the largest |actual − expected| / bound (−1 if none failed or exceeded 0). */
  readonly worstIndex: number;
  /** Its ratio (∞ for a convention broken or an error over a zero bound; above 1 fails). */
  readonly worstRatio: number;
}

/** What {@link compareDsaSparseMla} found. */
export interface DsaSparseMlaComparison {
  readonly out: DsaSparseMlaArrayComparison;
  readonly lse: DsaSparseMlaArrayComparison;
  /** Undefined when the actual result has no maxLogits. */
  readonly maxLogits: DsaSparseMlaArrayComparison | undefined;
  /** No failure in any compared array. */
  readonly ok: boolean;
}

/** Options of {@link compareDsaSparseMla}. */
export interface DsaSparseMlaCompareOptions {
  /** Multiplies every bound (default 1); > 1 only to investigate, never to make a failing test pass. */
  readonly slack?: number;
}

/** |a − e| / bound for finite e; 0 or ∞ for an exact convention (non-finite e, or a zero bound). */
function ratioOf(e: number, a: number, bound: number): number {
  if (Number.isNaN(a)) return Number.POSITIVE_INFINITY;
  if (!Number.isFinite(e) || bound === 0) return a === e ? 0 : Number.POSITIVE_INFINITY;
  const error = Math.abs(a - e);
  return error === 0 ? 0 : error / bound;
}

function compareArray(expected: Float32Array, actual: Float32Array, bound: Float64Array, slack: number): DsaSparseMlaArrayComparison {
  let failures = 0;
  let worstIndex = -1;
  let worstRatio = 0;
  for (let i = 0; i < expected.length; i++) {
    const ratio = ratioOf(expected[i]!, actual[i]!, slack * bound[i]!);
    if (ratio > 1) failures++;
    if (ratio > worstRatio) [worstRatio, worstIndex] = [ratio, i];
  }
  return { checked: expected.length, failures, worstIndex, worstRatio };
}

/**
 * Compares a kernel's sparse MLA outputs with the reference `expected` (from dsaSparseMlaPrefillReferenceWithBound or
 * dsaSparseMlaDecodeReferenceWithBound; same layouts): each element must lie within slack · bound of the reference
 * (the bound of dsaSparseMlaErrorBound: bf16 P and output rounding, fp32 accumulation, approximate exp2/log2).
 * Exact where the reference is: an empty row must give out ±0, lse +∞ and maxLogits −∞, and a non-empty row finite
 * values; an out element whose bound is 0 (every valid v is 0) must be 0; a NaN anywhere fails.
 * @throws DsaArgumentError for arrays of the wrong length or a slack that is not a positive finite number.
 */
export function compareDsaSparseMla(
  expected: DsaSparseMlaResultWithBound,
  actual: DsaSparseMlaActual,
  options: DsaSparseMlaCompareOptions = {},
): DsaSparseMlaComparison {
  const slack = options.slack ?? 1;
  if (!(slack > 0) || !Number.isFinite(slack)) throw new DsaArgumentError('options.slack', 'must be a positive finite number', slack);
  dsaCheckLength('actual.out', actual.out, expected.out.length, 'expected.out.length');
  dsaCheckLength('actual.lse', actual.lse, expected.lse.length, 'expected.lse.length');
  if (actual.maxLogits !== undefined)
    dsaCheckLength('actual.maxLogits', actual.maxLogits, expected.maxLogits.length, 'expected.maxLogits.length');
  const out = actual.out instanceof Uint16Array ? dsaBf16Values(actual.out) : actual.out;
  const result = {
    out: compareArray(expected.out, out, expected.bound.out, slack),
    lse: compareArray(expected.lse, actual.lse, expected.bound.lse, slack),
    maxLogits:
      actual.maxLogits === undefined ? undefined : compareArray(expected.maxLogits, actual.maxLogits, expected.bound.maxLogits, slack),
  };
  const ok = result.out.failures === 0 && result.lse.failures === 0 && (result.maxLogits?.failures ?? 0) === 0;
  return { ...result, ok };
}
