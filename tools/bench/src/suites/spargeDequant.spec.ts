import fc from 'fast-check';
import { spargeQuantizeBlocksInt8 } from '@tilekit/kernel-sparge';
import { describe, expect, it } from 'vitest';
import { spargeDequantFp32 } from './spargeDequant.ts';

describe('spargeDequantFp32', () => {
  const shape = { batch: 2, heads: 2, seqlen: 300, headDim: 8, blockSize: 128 };
  const n = 2 * 2 * 300 * 8;

  it('is the fp32 product int8 · scale of each element, its block (tail included) choosing the scale', () => {
    fc.assert(
      fc.property(fc.float32Array({ minLength: n, maxLength: n, noNaN: true, noDefaultInfinity: true, min: -100, max: 100 }), (x) => {
        const q = spargeQuantizeBlocksInt8(x, 2, 2, 300, 8, 128);
        const got = spargeDequantFp32(q, shape);
        expect(got).toBeInstanceOf(Float32Array);
        for (const at of [0, 8 * 127, 8 * 128, 8 * 299 + 7, n - 1]) {
          const bh = Math.floor(at / (300 * 8));
          const block = Math.floor((at % (300 * 8)) / (8 * 128));
          expect(got[at]).toBe(Math.fround(q.values[at]! * q.scales[bh * 3 + block]!));
          // The quantization bound: within half a step of the value.
          expect(Math.abs(got[at]! - x[at]!)).toBeLessThanOrEqual(q.scales[bh * 3 + block]! / 2 + 1e-6 * Math.abs(x[at]!) + 1e-6);
        }
      }),
      { numRuns: 20 },
    );
  });

  it('rejects value or scale counts that do not match the shape', () => {
    const q = spargeQuantizeBlocksInt8(new Float32Array(n), 2, 2, 300, 8, 128);
    expect(() => spargeDequantFp32({ values: q.values.subarray(1), scales: q.scales }, shape)).toThrow(/int8 values/);
    expect(() => spargeDequantFp32({ values: q.values, scales: q.scales.subarray(1) }, shape)).toThrow(
      /int8 scales: 11, the shape has 12 blocks/,
    );
  });
});
