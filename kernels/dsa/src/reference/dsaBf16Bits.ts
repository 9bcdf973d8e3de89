// bf16 tensors as the device holds them (bit patterns) and as the references read them (float32 values).
import { DsaArgumentError } from '../dsaArgumentError.ts';

/**
 * The bf16 bit patterns of `values`, each of which must already be a bf16 value (the low 16 bits of its
 * float32 pattern zero): exact, no rounding; what a test uploads for a reference that read `values`.
 * @throws DsaArgumentError naming the first element that is not a bf16 value (`argument[i]`).
 */
export function dsaBf16Bits(values: Float32Array, argument = 'values'): Uint16Array {
  const words = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const bits = new Uint16Array(values.length);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if ((w & 0xffff) !== 0) throw new DsaArgumentError(`${argument}[${i}]`, 'must be a bf16 value (low 16 float32 bits zero)', values[i]);
    bits[i] = w >>> 16;
  }
  return bits;
}

/** The values of bf16 bit patterns as float32 (exact: a bf16 pattern is the top half of a float32 one; NaN stays NaN). */
export function dsaBf16Values(bits: Uint16Array): Float32Array {
  const words = Uint32Array.from(bits, (b) => b << 16);
  return new Float32Array(words.buffer);
}
