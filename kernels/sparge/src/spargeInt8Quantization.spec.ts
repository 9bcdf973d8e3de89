import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spargeKeyMean } from './spargeBlockMapReference.ts';
import { spargeDequantizeBlocksInt8, spargeQuantizeBlocksInt8, spargeQuantizeQkInt8 } from './spargeInt8Quantization.ts';
import { spargeRandomValues } from './testing/spargeRandomValues.ts';

describe('spargeQuantizeBlocksInt8', () => {
  it('scales by max|x|/127 + 1e-7 and rounds half away from zero (golden)', () => {
    const x = Float64Array.from([127, -63.5, 0.5, -0.5, 1.5, 2.5, 0, -127]); // one block of 8 rows × 1 column
    const { values, scales } = spargeQuantizeBlocksInt8(x, 1, 1, 8, 1, 8);
    const scale = Math.fround(Math.fround(1) + Math.fround(1e-7));
    expect(scales[0]).toBe(scale);
    // x/scale is just below x, so 0.5 → 0.49999… → 0 and 63.5 → 63.499… → 63: fp32 as in the Triton kernel.
    expect(Array.from(values)).toEqual([127, -63, 0, 0, 1, 2, 0, -127]);
    const exact = spargeQuantizeBlocksInt8(Float64Array.from([254, -127, 1, -1, 3, 5]), 1, 1, 6, 1, 6);
    expect(exact.scales[0]).toBeCloseTo(2, 6);
  });

  it('round-trips within half a step per element, |q| ≤ 127, one scale per block (tails included)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 70 }),
        fc.constantFrom(16, 32, 64),
        fc.integer({ min: 0, max: 1 << 30 }),
        fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
        (batch, heads, seqlen, block, seed, amplitude) => {
          const d = 8;
          const x = spargeRandomValues(batch * heads * seqlen * d, seed, amplitude);
          const qz = spargeQuantizeBlocksInt8(x, batch, heads, seqlen, d, block);
          expect(qz.scales.length).toBe(batch * heads * Math.ceil(seqlen / block));
          const back = spargeDequantizeBlocksInt8(qz, batch, heads, seqlen, d);
          for (let i = 0; i < x.length; i++) {
            const blockIndex = Math.floor(i / d / seqlen) * Math.ceil(seqlen / block) + Math.floor((Math.floor(i / d) % seqlen) / block);
            const scale = qz.scales[blockIndex]!;
            expect(Math.abs(qz.values[i]!)).toBeLessThanOrEqual(127);
            expect(Math.abs(back[i]! - x[i]!)).toBeLessThanOrEqual(scale / 2 + 2 ** -20 * Math.abs(x[i]!) + 1e-7);
          }
        },
      ),
    );
  });

  it('quantizes K after subtracting its mean when smoothing, Q raw', () => {
    const shape = { batch: 1, nhead: 2, seqlenQ: 96, seqlenK: 80, headDim: 64 };
    const q = spargeRandomValues(2 * 96 * 64, 1);
    const k = spargeRandomValues(2 * 80 * 64, 2);
    for (let i = 0; i < k.length; i += 64) k[i] = k[i]! + 30;
    const smooth = spargeQuantizeQkInt8(shape, q, k, 64, 32, true);
    const raw = spargeQuantizeQkInt8(shape, q, k, 64, 32, false);
    expect(smooth.q).toEqual(raw.q);
    expect(smooth.keyMean).toEqual(spargeKeyMean(k, 1, 2, 80, 64));
    const back = spargeDequantizeBlocksInt8(smooth.k, 1, 2, 80, 64);
    let worst = 0;
    for (let i = 0; i < k.length; i++)
      worst = Math.max(worst, Math.abs(back[i]! + smooth.keyMean[Math.floor(i / (80 * 64)) * 64 + (i % 64)]! - k[i]!));
    expect(worst).toBeLessThan(Math.max(...smooth.k.scales) / 2 + 1e-6);
    // The common offset dominates the raw scales; smoothing removes it (SageAttention's reason for smoothing K).
    expect(Math.max(...smooth.k.scales)).toBeLessThan(Math.max(...raw.k.scales) / 10);
  });
});
