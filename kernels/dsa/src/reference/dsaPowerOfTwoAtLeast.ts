// The power-of-two rounding of the fp8 scales (internal: shared by the index-key and MLA-latent quantizers).

const bitsView = new DataView(new ArrayBuffer(4));

/**
 * The smallest power of two ≥ a positive normal fp32 `x`, exactly: with b the fp32 bits of x,
 * `(b + 0x007fffff) & 0xff800000` (a non-zero mantissa carries into the exponent, then is cleared).
 * The GPU writers compute it the same way: `__uint_as_float((__float_as_uint(x) + 0x7fffff) & 0xff800000)`.
 * This equals `exp2f(ceilf(log2f(x)))` whenever log2f is exact (the torch form); the bit form has no such caveat.
 */
export function dsaPowerOfTwoAtLeast(x: number): number {
  bitsView.setFloat32(0, x);
  bitsView.setUint32(0, ((bitsView.getUint32(0) + 0x007f_ffff) & 0xff80_0000) >>> 0);
  return bitsView.getFloat32(0);
}
