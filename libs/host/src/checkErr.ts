import { ArgumentError, type DTypeName, defaultTolerance } from '@tilekit/numeric';
import { HostTensor } from './hostTensor.ts';
import { formatShape, unravelIndex } from './shape.ts';

/** Options of checkErr. Omitted tolerances come from numeric's defaultTolerance(dtype). */
export interface CheckErrOptions {
  rtol?: number;
  atol?: number;
  /** Dtype whose default tolerance applies (default: out's dtype, fp32 for plain arrays). */
  dtype?: DTypeName;
  /** How many failing elements to list in `reported` and in the message (default 3). */
  maxReport?: number;
  /** Prefix of the message (CK's `msg` argument), e.g. `"o"` → `o: out of …`. */
  label?: string;
}

/** One failing element. */
export interface CheckErrFailure {
  index: number[];
  out: number;
  ref: number;
}

/** The outcome of checkErr. */
export interface CheckErrResult {
  ok: boolean;
  /** Elements compared. */
  total: number;
  /** Failing elements (tolerance violations plus NaN/Inf mismatches). */
  failures: number;
  /** Failing elements where out or ref is NaN or infinite and they differ. */
  nanInfMismatches: number;
  /** max |out − ref| over elements where both are finite (0 if none). */
  maxAbsErr: number;
  /** max |out − ref| / |ref| over elements where both are finite and ref ≠ 0 (0 if none). */
  maxRelErr: number;
  /** First multi-index where maxAbsErr is reached; null when maxAbsErr is 0. */
  worstIndex: number[] | null;
  rtol: number;
  atol: number;
  /** The first `maxReport` failures in row-major order. */
  reported: CheckErrFailure[];
  /** One line, CK style: `out of 1000 elements, 3 fail (rtol 0.001, atol 0.001): max abs err …`. */
  message: string;
}

/**
 * Compares a result with its reference the way CK-tile's `check_err` does: element i fails when
 * |out − ref| > atol + rtol·|ref|, or when either is NaN/±Inf and they differ (NaN matches NaN,
 * +Inf matches +Inf). Both sides are decoded to numbers, so out and ref may have different dtypes;
 * a plain array stands for a tensor of the other side's shape (row-major), or of shape [n].
 * Shapes (or lengths) must match exactly (ArgumentError otherwise).
 * Postconditions (tested): `ok` ⇔ `failures === 0`; comparing a tensor with itself is ok with
 * zero errors; the message is a single line.
 */
export function checkErr(
  out: HostTensor | ArrayLike<number>,
  ref: HostTensor | ArrayLike<number>,
  options: CheckErrOptions = {},
): CheckErrResult {
  const shape = sharedShape(out, ref);
  const dtype = options.dtype ?? (out instanceof HostTensor ? out.dtype.name : 'fp32');
  const defaults = options.rtol === undefined || options.atol === undefined ? defaultTolerance(dtype) : undefined;
  const rtol = options.rtol ?? defaults!.rtol;
  const atol = options.atol ?? defaults!.atol;
  for (const [name, value] of [
    ['rtol', rtol],
    ['atol', atol],
  ] as const) {
    if (!Number.isFinite(value) || value < 0) throw new ArgumentError('checkErr', `${name} must be finite and non-negative`, value);
  }
  const maxReport = options.maxReport ?? 3;
  if (!Number.isSafeInteger(maxReport) || maxReport < 0) {
    throw new ArgumentError('checkErr', 'maxReport must be a non-negative integer', maxReport);
  }

  const o = values(out);
  const r = values(ref);
  const total = o.length;
  let failures = 0;
  let nanInfMismatches = 0;
  let maxAbsErr = 0;
  let maxRelErr = 0;
  let worst = -1;
  const failing: number[] = [];
  for (let i = 0; i < total; i++) {
    const a = o[i]!;
    const b = r[i]!;
    let failed: boolean;
    if (Number.isFinite(a) && Number.isFinite(b)) {
      const err = Math.abs(a - b);
      if (err > maxAbsErr) {
        maxAbsErr = err;
        worst = i;
      }
      if (b !== 0) maxRelErr = Math.max(maxRelErr, err / Math.abs(b));
      failed = err > atol + rtol * Math.abs(b);
    } else {
      failed = !(a === b || (Number.isNaN(a) && Number.isNaN(b)));
      if (failed) nanInfMismatches++;
    }
    if (failed) {
      failures++;
      if (failing.length < maxReport) failing.push(i);
    }
  }

  const worstIndex = worst < 0 ? null : unravelIndex(worst, shape);
  const reported = failing.map((i) => ({ index: unravelIndex(i, shape), out: o[i]!, ref: r[i]! }));
  const prefix = options.label === undefined || options.label === '' ? '' : `${options.label}: `;
  const tolerance = `rtol ${num(rtol)}, atol ${num(atol)}`;
  const maxErr =
    worstIndex === null
      ? 'max abs err 0'
      : `max abs err ${num(maxAbsErr)} at ${formatShape(worstIndex)} (out ${num(o[worst]!)}, ref ${num(r[worst]!)}), max rel err ${num(maxRelErr)}`;
  let message: string;
  if (failures === 0) {
    message = `${prefix}ok: ${total} elements within ${tolerance}; ${maxErr}`;
  } else {
    const parts = [`${prefix}out of ${total} elements, ${failures} fail (${tolerance}): ${maxErr}`];
    if (nanInfMismatches > 0) parts.push(`${nanInfMismatches} NaN/Inf mismatch${nanInfMismatches === 1 ? '' : 'es'}`);
    if (reported.length > 0) {
      parts.push(`first: ${reported.map((f) => `${formatShape(f.index)} out ${num(f.out)} ref ${num(f.ref)}`).join(', ')}`);
    }
    message = parts.join('; ');
  }
  return { ok: failures === 0, total, failures, nanInfMismatches, maxAbsErr, maxRelErr, worstIndex, rtol, atol, reported, message };
}

function sharedShape(out: HostTensor | ArrayLike<number>, ref: HostTensor | ArrayLike<number>): readonly number[] {
  if (out instanceof HostTensor && ref instanceof HostTensor) {
    if (out.shape.length !== ref.shape.length || out.shape.some((n, i) => n !== ref.shape[i])) {
      throw new ArgumentError('checkErr', `out shape ${formatShape(out.shape)} must equal ref shape ${formatShape(ref.shape)}`);
    }
    return out.shape;
  }
  const outSize = out instanceof HostTensor ? out.size : out.length;
  const refSize = ref instanceof HostTensor ? ref.size : ref.length;
  if (outSize !== refSize) throw new ArgumentError('checkErr', `out has ${outSize} elements but ref has ${refSize}`);
  if (out instanceof HostTensor) return out.shape;
  if (ref instanceof HostTensor) return ref.shape;
  return [outSize];
}

function values(x: HostTensor | ArrayLike<number>): ArrayLike<number> {
  return x instanceof HostTensor ? x.toFloat64Array() : x;
}

/** Four significant digits, integers as is: short enough for a one-line report. */
function num(x: number): string {
  if (!Number.isFinite(x) || Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(4)));
}
