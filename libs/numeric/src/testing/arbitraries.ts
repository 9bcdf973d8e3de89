// Reusable fast-check arbitraries over dtypes and their values, for this and other packages' tests.
import fc from 'fast-check';
import { decode } from '../conversion.ts';
import { dtypeNames, dtypes, type DType, type DTypeName } from '../dtype.ts';

/** Any dtype name. */
export function dtypeNameArbitrary(): fc.Arbitrary<DTypeName> {
  return fc.constantFrom(...dtypeNames);
}

/** Any float dtype name (fp32, fp16, bf16 and the four fp8). */
export function floatDTypeNameArbitrary(): fc.Arbitrary<DTypeName> {
  return fc.constantFrom(...dtypeNames.filter((n) => dtypes[n].kind === 'float'));
}

/**
 * Values exactly representable in `dtype` (so `roundTo(dtype, v) === v`): a uniformly random bit
 * pattern decoded, which favours neither binade. Floats: `finite` (default true) drops ±Inf and NaN.
 * int64: values within ±2^53 only (numbers beyond are not all integers of int64 exactly).
 */
export function representableArbitrary(dtype: DType | DTypeName, options: { finite?: boolean } = {}): fc.Arbitrary<number> {
  const d = typeof dtype === 'string' ? dtypes[dtype] : dtype;
  if (d.kind === 'int') {
    if (d.name === 'int64') return fc.maxSafeInteger();
    return fc.integer({ min: d.lowest, max: d.max });
  }
  const finite = options.finite ?? true;
  const values = fc.integer({ min: 0, max: 2 ** d.bits - 1 }).map((bits) => decode(d, bits));
  return finite ? values.filter(Number.isFinite) : values;
}

/** float64 values inside the finite range [lowest, max] of `dtype` (no NaN), any precision. */
export function inRangeArbitrary(dtype: DType | DTypeName): fc.Arbitrary<number> {
  const d = typeof dtype === 'string' ? dtypes[dtype] : dtype;
  return fc.double({ min: d.lowest, max: d.max, noNaN: true });
}
