// The binary exponent of a number (internal: shared by the error bound and its emulation).

/** ⌊log2 |x|⌋ exactly, for finite x ≠ 0 (Math.log2 corrected by one step either way). */
export function dsaExponentOf(x: number): number {
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  return e;
}
