import { resolveDType, type DType, type DTypeName } from './dtype.ts';
import { binadeExponent, pow2 } from './float64Bits.ts';
import { ArgumentError } from './tilekitError.ts';

/** A comparison tolerance in CK-tile's `check_err` form: |out − ref| ≤ atol + rtol·|ref|. */
export interface Tolerance {
  readonly rtol: number;
  readonly atol: number;
}

function checkAccumulations(nAcc: unknown): asserts nAcc is number {
  if (typeof nAcc !== 'number' || !Number.isSafeInteger(nAcc) || nAcc < 0) {
    throw new ArgumentError('nAcc', 'must be a non-negative safe integer (the number of accumulations)', nAcc);
  }
}

/**
 * CK-tile's `get_relative_threshold<Compute, Out, Acc>(n_acc)`: the largest of half an ulp (relative,
 * 2^−mantissaBits / 2) of the compute and output types and n_acc half-ulps of the accumulator type.
 * 0 when any of the three is an integer type (integer pipelines are compared exactly).
 * Example: (fp16, fp16, fp32, 1024) → max(2^-11, 2^-11, 2^-24·1024) = 2^-11.
 */
export function relativeThreshold(compute: DTypeName | DType, out: DTypeName | DType, acc: DTypeName | DType, nAcc = 1): number {
  const [c, o, a] = [resolveDType(compute), resolveDType(out), resolveDType(acc)];
  checkAccumulations(nAcc);
  if (c.kind === 'int' || o.kind === 'int' || a.kind === 'int') return 0;
  return Math.max(c.epsilon * 0.5, o.epsilon * 0.5, a.epsilon * 0.5 * nAcc);
}

/**
 * CK-tile's `get_absolute_threshold<Compute, Out, Acc>(max_value, n_acc)` (current rocm-libraries
 * form): with e = ⌊log2 |maxValue|⌋, the largest of half an ulp of the compute type at 2^e, a FULL
 * ulp of the output type at 2^e (hardware and software narrowing may differ by one ulp at ties),
 * and n_acc half-ulps of the accumulator at 2^e. 0 when any type is an integer or maxValue is 0.
 * The exponent is taken exactly from the float64 (CK uses floor(log2(x)), which can be off by one
 * just below a power of two).
 * Example: (bf16, bf16, fp32, maxValue 10, 1) → e = 3: max(2^(3-7)/2, 2^(3-7), 2^(3-23)/2) = 2^-4.
 * @throws ArgumentError when maxValue is not finite.
 */
export function absoluteThreshold(
  compute: DTypeName | DType,
  out: DTypeName | DType,
  acc: DTypeName | DType,
  maxValue: number,
  nAcc = 1,
): number {
  const [c, o, a] = [resolveDType(compute), resolveDType(out), resolveDType(acc)];
  checkAccumulations(nAcc);
  if (typeof maxValue !== 'number' || !Number.isFinite(maxValue)) {
    throw new ArgumentError('maxValue', 'must be a finite number (the largest magnitude the result can reach)', maxValue);
  }
  if (c.kind === 'int' || o.kind === 'int' || a.kind === 'int' || maxValue === 0) return 0;
  const scale = pow2(binadeExponent(Math.abs(maxValue)));
  return Math.max(c.epsilon * 0.5 * scale, o.epsilon * scale, a.epsilon * 0.5 * nAcc * scale);
}

const checkErrDefaults: Readonly<Partial<Record<DTypeName, Tolerance>>> = Object.freeze({
  fp32: Object.freeze({ rtol: 1e-5, atol: 3e-6 }),
  fp16: Object.freeze({ rtol: 1e-3, atol: 1e-3 }),
  bf16: Object.freeze({ rtol: 1e-3, atol: 1e-3 }),
});

/**
 * The default tolerance for comparing results stored in `dtype`:
 * - fp32 1e-5 / 3e-6, fp16 and bf16 1e-3 / 1e-3: CK-tile `check_err`'s defaults;
 * - fp8 (all four): one rounding step, i.e. rtol = epsilon (2^−mantissaBits: one ulp relative to
 *   any normal value) and atol = minSubnormal (one step in the subnormal range). Postcondition
 *   (tested exhaustively): any two adjacent finite values a, b satisfy |a − b| ≤ atol + rtol·|a|
 *   and ≤ atol + rtol·|b|;
 * - integers: exact (0 / 0).
 */
export function defaultTolerance(dtype: DTypeName | DType): Tolerance {
  const d = resolveDType(dtype);
  const fixed = checkErrDefaults[d.name];
  if (fixed !== undefined) return fixed;
  if (d.kind === 'int') return { rtol: 0, atol: 0 };
  return { rtol: d.epsilon, atol: d.minSubnormal };
}
