import { encodeArray } from '@tilekit/numeric';

/** mulberry32: a small seeded generator of uniform numbers in [0, 1). */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * `n` standard normal values drawn in fp32 (Box–Muller from a seeded generator) and rounded to
 * `dtype`, as bit patterns: full-entropy inputs like the harness's `normal` source.
 */
export function normalBits(dtype: 'fp16' | 'bf16', n: number, seed: number): Uint16Array {
  const next = uniform(seed);
  const values = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - next()));
    const angle = 2 * Math.PI * next();
    values[i] = Math.fround(radius * Math.cos(angle));
    if (i + 1 < n) values[i + 1] = Math.fround(radius * Math.sin(angle));
  }
  return encodeArray(dtype, values);
}
