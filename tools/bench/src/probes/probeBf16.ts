// Inputs of the development probes: pseudo-random bf16 bits without a reference (timing only).

/** n bf16 values of magnitude 2^-7 … 2^-2 with random signs (xorshift bits from `seed`). */
export function probeBf16(n: number, seed: number): Uint16Array {
  const out = new Uint16Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const r = x >>> 0;
    out[i] = ((r >>> 31) << 15) | ((120 + (r % 6)) << 7) | ((r >>> 8) & 0x7f);
  }
  return out;
}
