// Test inputs of the GEMM GPU specs: deterministic operand values that every dtype represents exactly.
import { randomBits16 } from '@tilekit/host';
import { decodeArray } from '@tilekit/numeric';
import type { GemmDType } from '../gemmProblem.ts';

/**
 * `count` seeded values uniform in [-1, 1) (host's `randomBits16`), rounded to `dtype`: `bits` to
 * upload, `values` (the decoded bits) for the CPU reference, so both sides see the same numbers.
 */
export function gemmTestValues(
  count: number,
  dtype: GemmDType,
  seed: number,
): { readonly values: Float64Array; readonly bits: Uint16Array } {
  const bits = randomBits16(dtype, count, seed);
  return { values: decodeArray(dtype, bits), bits };
}
