import { ArgumentError } from '@tilekit/numeric';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary32 value `steps` ulps away from positive `x` (toward +∞ for positive steps). */
function float32Step(x: number, steps: 1 | -1): number {
  f32[0] = x;
  u32[0] = (u32[0] as number) + steps;
  return f32[0] as number;
}

/** `x` (a non-negative binary32 value, or 2^128) in units of 2^-150, exactly. */
function units(x: number): bigint {
  return x === Infinity ? 1n << 278n : BigInt(x * 2 ** 150);
}

/**
 * Does the exact decimal `text` (non-negative, JS number syntax) lie strictly between the rounding
 * midpoints around the positive binary32 value `x`, so that a correctly rounding C++ compiler reads
 * `textf` as exactly `x`? Ties are rejected (a longer string is used instead).
 */
function readsAsFloat32(text: string, x: number): boolean {
  const m = /^(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/.exec(text);
  if (m === null) return false;
  const frac = m[2] ?? '';
  const digits = BigInt((m[1] ?? '') + frac);
  const exp10 = Number(m[3] ?? '0') - frac.length;
  const below = float32Step(x, -1);
  const aboveRaw = float32Step(x, 1);
  const X = units(x);
  // Midpoints in units of 2^-151 (so that they are integers); the value of text in the same unit.
  const lo = units(below) + X;
  const hi = X + (aboveRaw === Infinity ? 1n << 278n : units(aboveRaw));
  const scale = 1n << 151n;
  const compare = (mid: bigint): number => {
    // sign of (digits * 10^exp10 * 2^151 - mid), with both sides scaled to integers
    let left = digits * scale;
    let right = mid;
    if (exp10 >= 0) left *= 10n ** BigInt(exp10);
    else right *= 10n ** BigInt(-exp10);
    return left < right ? -1 : left > right ? 1 : 0;
  };
  return compare(lo) > 0 && compare(hi) < 0;
}

function withPoint(text: string): string {
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/**
 * The C++ text of a `double` literal: the shortest decimal that reads back as `x` (JS `String`
 * gives exactly that for binary64), with a `.0` added when needed so it stays floating.
 * Postcondition: `Number(text) === x` and `-0` prints as `-0.0`. Non-finite values are rejected.
 */
export function doubleLiteralText(x: number): string {
  if (!Number.isFinite(x)) throw new ArgumentError('value', 'a floating literal must be finite', x);
  if (Object.is(x, -0)) return '-0.0';
  return withPoint(String(x));
}

/**
 * The C++ text of a `float` literal (with the `f` suffix): the shortest decimal of at most 9
 * significant digits that a correctly rounding compiler reads as exactly the binary32 value `x`
 * (checked with exact rational arithmetic, not via binary64, so no double-rounding surprise).
 */
export function floatLiteralText(x: number): string {
  if (!Number.isFinite(x) || Math.fround(x) !== x) {
    throw new ArgumentError('value', 'a float literal must be a finite binary32 value', x);
  }
  if (x === 0) return Object.is(x, -0) ? '-0.0f' : '0.0f';
  const a = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  for (let p = 1; p <= 9; p++) {
    const text = a.toPrecision(p);
    if (readsAsFloat32(text, a)) return `${sign}${withPoint(text)}f`;
  }
  // Nine significant digits always identify a binary32 value; a tie would need more, so use 17.
  return `${sign}${withPoint(a.toPrecision(17))}f`;
}
