/**
 * Exact integer helpers on JS numbers (safe integers, |x| ≤ 2^53 − 1). Division is floor division,
 * the semantics of every evaluator in this package: ⌊a/b⌋ and a − b·⌊a/b⌋ ∈ [0, b) for b ≥ 1.
 */

/** ⌊a / b⌋ for b ≥ 1; exact for safe integers (the float quotient is corrected by one step). */
export function floorDivInt(a: number, b: number): number {
  let q = Math.floor(a / b);
  const r = a - q * b;
  if (r < 0) q -= 1;
  else if (r >= b) q += 1;
  return q === 0 ? 0 : q;
}

/** a mod b ∈ [0, b) for b ≥ 1 (floor modulo). */
export function modInt(a: number, b: number): number {
  const r = a - floorDivInt(a, b) * b;
  return r === 0 ? 0 : r;
}

/** ⌈a / b⌉ for b ≥ 1. */
export function ceilDivInt(a: number, b: number): number {
  return -floorDivInt(-a, b);
}

/** Greatest common divisor of |a| and |b|; gcd(0, b) = |b|. */
export function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Whether x is 2^k for some k ≥ 0. */
export function isPowerOfTwo(x: number): boolean {
  return Number.isSafeInteger(x) && x >= 1 && (x <= 0x40000000 ? (x & (x - 1)) === 0 : Number.isInteger(Math.log2(x)));
}

/** Smallest power of two ≥ x (x ≥ 1). */
export function nextPowerOfTwo(x: number): number {
  let p = 1;
  while (p < x) p *= 2;
  return p;
}

/**
 * Two's-complement xor of two safe integers, exactly (JS `^` truncates to 32 bits, so wider values
 * go through BigInt).
 */
export function xorInt(a: number, b: number): number {
  if ((a | 0) === a && (b | 0) === b) return a ^ b;
  return Number(BigInt(a) ^ BigInt(b));
}
