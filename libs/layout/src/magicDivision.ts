import { InvalidParameterError } from './errors.ts';

/**
 * Division by a runtime divisor with a precomputed "magic" multiplier (CK-tile's `magic_division`,
 * the round-up method of Granlund–Montgomery): no hardware divide, three instructions on a GPU
 * (`mul.hi`, add, shift).
 *
 * For a divisor 1 ≤ d ≤ 2^31 − 1 let s = ⌈log2 d⌉ and m = ⌊2^32·(2^s − d) / d⌋ + 1 (m < 2^32). Then
 *
 *     ⌊n / d⌋ = (mulhi32(n, m) + n) >> s      for every 0 ≤ n ≤ 2^31 − 1,
 *
 * where mulhi32(n, m) = ⌊n·m / 2^32⌋ and the sum is taken in 32-bit unsigned arithmetic (it stays
 * below 2^32 because n < 2^31). Why: with M = 2^32 + m = ⌊2^(32+s)/d⌋ + 1 = 2^(32+s)/d + e,
 * 0 < e ≤ 1, the left side is ⌊n/d + n·e/2^(32+s)⌋ and the error term is below 2^−(s+1) < 1/d, so it
 * never reaches the next integer. Outside that range (n ≥ 2^31, or a negative n) the result is not
 * guaranteed; emission only uses it when interval analysis proves the dividend inside the range.
 */

/** The largest dividend the magic division is exact for. */
export const MAGIC_DIVISION_MAX_DIVIDEND = 2 ** 31 - 1;
/** The largest divisor supported. */
export const MAGIC_DIVISION_MAX_DIVISOR = 2 ** 31 - 1;

/** The magic numbers of one divisor: `multiplier` (uint32) and `shift` in [0, 31]. */
export interface MagicNumbers {
  readonly multiplier: number;
  readonly shift: number;
}

/** Magic numbers of `d` (1 ≤ d ≤ 2^31 − 1). Postcondition: `magicDivide(n, magicNumbers(d))` = ⌊n/d⌋ for 0 ≤ n < 2^31. */
export function magicNumbers(d: number): MagicNumbers {
  if (!Number.isSafeInteger(d) || d < 1 || d > MAGIC_DIVISION_MAX_DIVISOR) {
    throw new InvalidParameterError('magicNumbers divisor', `must be an integer in [1, ${MAGIC_DIVISION_MAX_DIVISOR}]`, String(d));
  }
  let shift = 0;
  while (2 ** shift < d) shift++;
  const multiplier = Number(((1n << 32n) * ((1n << BigInt(shift)) - BigInt(d))) / BigInt(d) + 1n);
  return { multiplier, shift };
}

/** ⌊n·m / 2^32⌋ for 0 ≤ n < 2^32, 0 ≤ m < 2^32, exactly (16-bit limbs keep products below 2^53). */
export function mulhi32(n: number, m: number): number {
  const mh = Math.floor(m / 65536);
  const ml = m % 65536;
  return Math.floor((n * mh + Math.floor((n * ml) / 65536)) / 65536);
}

/** The emitted computation, in TS: (mulhi32(n, m) + n) mod 2^32 >> s. Exact only for 0 ≤ n < 2^31. */
export function magicDivide(n: number, magic: MagicNumbers): number {
  const sum = (mulhi32(n, magic.multiplier) + n) % 2 ** 32;
  return Math.floor(sum / 2 ** magic.shift);
}
