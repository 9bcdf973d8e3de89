/** Σ_{t < n} x[xo + t]·y[yo + t], with two partial sums. */
export function dot(x: Float64Array, xo: number, y: Float64Array, yo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let t = 0;
  for (; t + 1 < n; t += 2) {
    s0 += x[xo + t]! * y[yo + t]!;
    s1 += x[xo + t + 1]! * y[yo + t + 1]!;
  }
  if (t < n) s0 += x[xo + t]! * y[yo + t]!;
  return s0 + s1;
}
