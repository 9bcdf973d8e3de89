import { valueTable16 } from '@tilekit/fmha';
import { encodeArray } from '@tilekit/numeric';

/** Rounds every value of `x` to `dtype` (nearest even, as a kernel's conversion) in place, and returns `x`. */
export function roundInPlace(dtype: 'fp16' | 'bf16', x: Float64Array): Float64Array {
  const bits = encodeArray(dtype, x);
  const table = valueTable16(dtype);
  for (let i = 0; i < x.length; i++) x[i] = table[bits[i]!]!;
  return x;
}

/** The values of `dtype` bit patterns. */
export function decodeBits(dtype: 'fp16' | 'bf16', bits: Uint16Array): Float64Array {
  const table = valueTable16(dtype);
  const x = new Float64Array(bits.length);
  for (let i = 0; i < bits.length; i++) x[i] = table[bits[i]!]!;
  return x;
}
