import { ArgumentError } from '@tilekit/numeric';
import type { ErrorStats, ReferenceStats } from '../referenceProtocol.ts';

/**
 * The error of `got` against `want` as REFERENCE_OPS.md defines it, in float64:
 * maxAbs = max |got − want|, rms = sqrt(mean((got − want)²)) (summed relative to maxAbs, so tiny or
 * huge errors neither underflow nor overflow). Any NaN or ±Inf in `got` makes both Infinity; empty
 * arrays give zeros.
 * @throws ArgumentError naming `got` when the lengths differ, `want` when it holds a non-finite value.
 */
export function errorStats(got: ArrayLike<number>, want: ArrayLike<number>): ErrorStats {
  const n = got.length;
  if (n !== want.length) throw new ArgumentError('got', `must have want's length ${want.length}`, n);
  let maxAbs = 0;
  let finite = true;
  for (let i = 0; i < n; i++) {
    const w = want[i]!;
    if (!Number.isFinite(w)) throw new ArgumentError('want', `must be finite (the reference); element ${i} is not`, w);
    const e = Math.abs(got[i]! - w);
    if (e > maxAbs) maxAbs = e;
    else if (!(e <= maxAbs)) finite = false; // NaN, or got = ±Inf after maxAbs became Inf
  }
  if (!finite || maxAbs === Infinity) return { maxAbs: Infinity, rms: Infinity };
  if (maxAbs === 0) return { maxAbs: 0, rms: 0 };
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const e = (got[i]! - want[i]!) / maxAbs;
    squares += e * e;
  }
  return { maxAbs, rms: maxAbs * Math.sqrt(squares / n) };
}

/**
 * The size of a reference output: max |want| and sqrt(mean(want²)) (zeros when empty).
 * @throws ArgumentError naming `want` when it holds a non-finite value.
 */
export function referenceStats(want: ArrayLike<number>): ReferenceStats {
  let maxAbs = 0;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (!Number.isFinite(w)) throw new ArgumentError('want', `must be finite (the reference); element ${i} is not`, w);
    maxAbs = Math.max(maxAbs, Math.abs(w));
  }
  if (maxAbs === 0) return { maxAbs: 0, rms: 0 };
  let squares = 0;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]! / maxAbs;
    squares += w * w;
  }
  return { maxAbs, rms: maxAbs * Math.sqrt(squares / want.length) };
}
