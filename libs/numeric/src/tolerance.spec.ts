// CK-tile thresholds (check_err.hpp) on hand-computed cases, and the fp8 one-step tolerance.
import { describe, expect, it } from 'vitest';
import { decode } from './conversion.ts';
import { dtypeNames, dtypes } from './dtype.ts';
import { absoluteThreshold, defaultTolerance, relativeThreshold } from './tolerance.ts';
import { ArgumentError } from './tilekitError.ts';

describe('relativeThreshold', () => {
  it('is the largest half-ulp of compute and out, and n half-ulps of acc', () => {
    expect(relativeThreshold('fp16', 'fp16', 'fp32')).toBe(2 ** -11);
    expect(relativeThreshold('fp16', 'fp16', 'fp32', 1024)).toBe(2 ** -11); // 2^-24·1024 = 2^-14 is smaller
    expect(relativeThreshold('fp16', 'fp16', 'fp32', 2 ** 14)).toBe(2 ** -10); // acc term wins
    expect(relativeThreshold('bf16', 'fp32', 'fp32')).toBe(2 ** -8);
    expect(relativeThreshold('fp8e4m3fn', 'fp16', 'fp32')).toBe(2 ** -4);
    expect(relativeThreshold('fp8e5m2', 'bf16', 'fp32', 8)).toBe(2 ** -3);
    expect(relativeThreshold('fp32', 'fp32', 'fp32', 4)).toBe(2 ** -22);
    expect(relativeThreshold(dtypes.fp16, 'bf16', 'fp32')).toBe(2 ** -8);
  });

  it('is 0 when any type is an integer', () => {
    expect(relativeThreshold('int8', 'int32', 'int32')).toBe(0);
    expect(relativeThreshold('fp16', 'int8', 'fp32')).toBe(0);
    expect(relativeThreshold('fp16', 'fp16', 'int32', 100)).toBe(0);
  });
});

describe('absoluteThreshold', () => {
  it('scales each term by 2^⌊log2 |max|⌋, with a full ulp for the output type', () => {
    // e = 3: compute ½·2^(3−7), out 2^(3−7), acc ½·2^(3−23)
    expect(absoluteThreshold('bf16', 'bf16', 'fp32', 10)).toBe(2 ** -4);
    // e = 0: fp16 out full ulp 2^-10 beats compute ½·2^-10
    expect(absoluteThreshold('fp16', 'fp16', 'fp32', 1)).toBe(2 ** -10);
    expect(absoluteThreshold('fp16', 'fp16', 'fp32', -1.99)).toBe(2 ** -10);
    // e = 7 (max 255): acc ½·2^(7−23)·2^20 = 2^3 beats out 2^(7−10)
    expect(absoluteThreshold('fp16', 'fp16', 'fp32', 255, 2 ** 20)).toBe(8);
    // e = −1: fp32 everything ½·2^-24 except out 2^-24
    expect(absoluteThreshold('fp32', 'fp32', 'fp32', 0.75)).toBe(2 ** -24);
    // exact exponent just below a power of two (Math.log2 would round up to 1)
    expect(absoluteThreshold('fp16', 'fp16', 'fp16', 2 - 2 ** -52)).toBe(2 ** -10);
  });

  it('is 0 for integer types or a zero maximum; rejects a non-finite maximum', () => {
    expect(absoluteThreshold('int8', 'int8', 'int32', 100)).toBe(0);
    expect(absoluteThreshold('fp16', 'fp16', 'fp32', 0)).toBe(0);
    expect(() => absoluteThreshold('fp16', 'fp16', 'fp32', Infinity)).toThrow(/maxValue: must be a finite number/);
    expect(() => absoluteThreshold('fp16', 'fp16', 'fp32', NaN)).toThrow(ArgumentError);
    expect(() => relativeThreshold('fp16', 'fp16', 'fp32', -1)).toThrow(/nAcc: must be a non-negative safe integer/);
    expect(() => relativeThreshold('fp16', 'fp16', 'fp64' as 'fp32')).toThrow(/dtype: must be one of/);
  });
});

describe('defaultTolerance', () => {
  it('uses check_err defaults for fp32, fp16, bf16 and exactness for integers', () => {
    expect(defaultTolerance('fp32')).toEqual({ rtol: 1e-5, atol: 3e-6 });
    expect(defaultTolerance('fp16')).toEqual({ rtol: 1e-3, atol: 1e-3 });
    expect(defaultTolerance('bf16')).toEqual({ rtol: 1e-3, atol: 1e-3 });
    for (const name of ['int8', 'uint8', 'int32', 'int64'] as const) expect(defaultTolerance(name)).toEqual({ rtol: 0, atol: 0 });
  });

  it('gives fp8 one rounding step: epsilon relative, minSubnormal absolute', () => {
    expect(defaultTolerance('fp8e4m3fn')).toEqual({ rtol: 0.125, atol: 2 ** -9 });
    expect(defaultTolerance('fp8e5m2')).toEqual({ rtol: 0.25, atol: 2 ** -16 });
    expect(defaultTolerance('fp8e4m3fnuz')).toEqual({ rtol: 0.125, atol: 2 ** -10 });
    expect(defaultTolerance('fp8e5m2fnuz')).toEqual({ rtol: 0.25, atol: 2 ** -17 });
  });

  it('fp8: every pair of adjacent finite values is within the tolerance, measured from either side', () => {
    for (const name of dtypeNames.filter((n) => n.startsWith('fp8'))) {
      const { rtol, atol } = defaultTolerance(name);
      const sorted = Array.from({ length: 256 }, (_, b) => decode(name, b))
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      for (let i = 1; i < sorted.length; i++) {
        const [a, b] = [sorted[i - 1]!, sorted[i]!];
        expect(b - a).toBeLessThanOrEqual(atol + rtol * Math.min(Math.abs(a), Math.abs(b)));
      }
    }
  });
});
