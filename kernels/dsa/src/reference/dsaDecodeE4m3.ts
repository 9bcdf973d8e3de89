// Exact e4m3fn decoding for the CPU references (internal: not re-exported from the package).
import { decode } from '@tilekit/numeric';
import { DsaArgumentError } from '../dsaArgumentError.ts';

/** Every e4m3fn pattern's exact value (NaN at 0x7f and 0xff), decoded once. */
const E4M3_VALUES = Float64Array.from({ length: 256 }, (_, bits) => decode('fp8e4m3fn', bits));

/** The exact value of one e4m3fn pattern (NaN for 0x7f and 0xff). */
export function dsaE4m3Value(bits: number): number {
  return E4M3_VALUES[bits & 0xff]!;
}

/**
 * The exact values of `bits[offset … offset + count)` as float64.
 * @throws DsaArgumentError naming `argument[i]` for a NaN pattern (0x7f, 0xff): the references reject
 * them because a GPU's ReLU (fmaxf) would turn NaN into 0 while float64 arithmetic keeps it.
 */
export function dsaDecodeE4m3(argument: string, bits: Uint8Array, offset = 0, count = bits.length - offset): Float64Array {
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const value = E4M3_VALUES[bits[offset + i]!]!;
    if (Number.isNaN(value))
      throw new DsaArgumentError(`${argument}[${offset + i}]`, 'must not be an e4m3 NaN pattern (0x7f, 0xff)', bits[offset + i]);
    out[i] = value;
  }
  return out;
}
