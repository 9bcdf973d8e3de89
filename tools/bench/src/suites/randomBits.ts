import { encode } from '@tilekit/numeric';

/**
 * `count` (at least 1) fp16/bf16 bit patterns drawn (xorshift32, seeded; seed 0 acts as 1) from the
 * 256 values (i − 128)/128 in [-1, 1), all exactly representable in `dtype`: bench inputs that are
 * cheap to make and exact in the reference.
 */
export function randomBits(dtype: 'fp16' | 'bf16', count: number, seed: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) table[i] = encode(dtype, (i - 128) / 128);
  const out = new Uint16Array(Math.max(1, count));
  let x = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = table[x & 255]!;
  }
  return out;
}
