// The order-preserving image of an fp32 value as an unsigned 32-bit key (radix selection sorts by it).

const scratch = new DataView(new ArrayBuffer(4));

/**
 * The uint32 key of the fp32 value nearest `value`: negative values get their bits inverted, others
 * the sign bit set, so keys compare as the values do (−0 just below +0; NaNs above +∞ or below −∞
 * by their sign bit). Postcondition (property-tested): x < y ⇒ key(x) < key(y) for non-NaN x, y.
 */
export function dsaOrderedKey(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  return (bits & 0x8000_0000 ? ~bits : bits | 0x8000_0000) >>> 0;
}

/** The fp32 value of an ordered key (the inverse of {@link dsaOrderedKey}). */
export function dsaValueOfOrderedKey(key: number): number {
  const bits = key & 0x8000_0000 ? key & 0x7fff_ffff : ~key;
  scratch.setUint32(0, bits >>> 0);
  return scratch.getFloat32(0);
}
