// Test inputs of the GEMM GPU specs: deterministic operand values that every dtype represents exactly.
import { decode, encode } from '@tilekit/numeric';
import type { GemmDType } from '../gemmProblem.ts';

/**
 * `count` deterministic values in [-1, 1) (xorshift from `seed`), rounded to `dtype`: `bits` to
 * upload, `values` (the decoded bits) for the CPU reference, so both sides see the same numbers.
 */
export function gemmTestValues(count: number, dtype: GemmDType, seed: number): { readonly values: Float64Array; readonly bits: Uint16Array } {
  const values = new Float64Array(count);
  const bits = new Uint16Array(count);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    bits[i] = encode(dtype, (x / 2 ** 32) * 2 - 1);
    values[i] = decode(dtype, bits[i]!);
  }
  return { values, bits };
}
