// Exact float64 helpers shared by the codecs. Internal: not re-exported from the barrel.

const POW2_MIN = -1074;
const POW2_MAX = 1023;

/** 2^k for every k a float64 can hold exactly, built by repeated doubling/halving (both exact). */
const powersOfTwo = (() => {
  const table = new Float64Array(POW2_MAX - POW2_MIN + 1);
  let up = 1;
  let down = 1;
  table[-POW2_MIN] = 1;
  for (let k = 1; k <= POW2_MAX; k++) table[k - POW2_MIN] = up *= 2;
  for (let k = -1; k >= POW2_MIN; k--) table[k - POW2_MIN] = down /= 2;
  return table;
})();

/** Exactly 2^k for integer k in [-1074, 1023] (Math.pow is not guaranteed exact by the spec). */
export function pow2(k: number): number {
  return powersOfTwo[k - POW2_MIN]!;
}

const scratch = new DataView(new ArrayBuffer(8));

/**
 * floor(log2(a)) for a finite a > 0, read from the float64 exponent field (exact, unlike Math.log2
 * just below a power of two). Float64 subnormals (a < 2^-1022) report -1023: every caller only needs
 * to know that they lie below the smallest normal of the narrow format.
 */
export function binadeExponent(a: number): number {
  scratch.setFloat64(0, a);
  const biased = (scratch.getUint32(0) >>> 20) & 0x7ff;
  return biased === 0 ? -1023 : biased - 1023;
}

/** The IEEE binary32 bit pattern of Math.fround(value), NaN payloads as the engine writes them. */
export function float32BitsOf(value: number): number {
  scratch.setFloat32(0, value);
  return scratch.getUint32(0);
}

/** The binary32 value of a 32-bit pattern (0 ≤ bits < 2^32). */
export function float32FromBits(bits: number): number {
  scratch.setUint32(0, bits);
  return scratch.getFloat32(0);
}
