// The float64 neighbours of a double, for tests that probe just above or below a rounding boundary.

const view = new DataView(new ArrayBuffer(8));

function step(x: number, up: boolean): number {
  if (Number.isNaN(x) || x === (up ? Infinity : -Infinity)) return x;
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  // Moving away from zero increments the magnitude's bit pattern; toward zero decrements it.
  view.setBigUint64(0, x > 0 === up ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The smallest double greater than `x` (x itself for NaN and +Inf). */
export function nextUp(x: number): number {
  return step(x, true);
}

/** The largest double less than `x` (x itself for NaN and −Inf). */
export function nextDown(x: number): number {
  return step(x, false);
}
