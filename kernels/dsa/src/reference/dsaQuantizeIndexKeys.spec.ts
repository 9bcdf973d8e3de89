import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaScaleFormat } from '../dsaShape.ts';
import { dsaRandomIndexKeys } from '../testing/dsaRandomInputs.ts';
import { dsaDequantizeIndexKey, dsaIndexKeyScale, dsaQuantizeIndexKeys } from './dsaQuantizeIndexKeys.ts';

const D = 128;
const formats: DsaScaleFormat[] = ['fp32', 'ue8m0'];
const e4m3 = (bits: number): number => decode('fp8e4m3fn', bits);

/** Independent e4m3fn encoder: the nearest finite magnitude by exhaustive search, ties to the even pattern, sign kept. */
const magnitudes = Array.from({ length: 0x7f }, (_, bits) => e4m3(bits));
function nearestE4m3(y: number): number {
  const magnitude = Math.abs(y);
  let best = 0;
  for (let bits = 1; bits <= 0x7e; bits++) {
    const d = Math.abs(magnitudes[bits]! - magnitude);
    const bestD = Math.abs(magnitudes[best]! - magnitude);
    if (d < bestD || (d === bestD && (bits & 1) === 0)) best = bits;
  }
  return (y < 0 || Object.is(y, -0) ? 0x80 : 0) | best;
}

/** Half the e4m3fn spacing at magnitude x (subnormal spacing 2^-9 below 2^-6), and the clamp beyond 448. */
function halfUlpE4m3(x: number): number {
  if (x > 448) return x - 448 + 8;
  return x < 2 ** -6 ? 2 ** -10 : 2 ** (Math.floor(Math.log2(x)) - 4);
}

/** A token with the given leading values, zeros elsewhere. */
const token = (...lead: number[]): Float32Array => {
  const k = new Float32Array(D);
  k.set(lead);
  return k;
};

const keysArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    tokens: fc.integer({ min: 1, max: 6 }),
    stddev: fc.constantFrom(1e-6, 1e-3, 1, 300),
  })
  .map(({ seed, tokens, stddev }) => ({ tokens, keys: dsaRandomIndexKeys(tokens, new Prng(seed), { stddev, zeroTokenRate: 0.1 }) }));

/** Keys whose tokens all have amax well above the floor (scaling by 2^±12 keeps them above it). */
const normalKeysArb = fc
  .record({ seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }), tokens: fc.integer({ min: 1, max: 4 }), stddev: fc.constantFrom(1, 30) })
  .map(({ seed, tokens, stddev }) => ({ tokens, keys: dsaRandomIndexKeys(tokens, new Prng(seed), { stddev }) }));

describe('dsaIndexKeyScale', () => {
  it('floors amax at fp32(1e-4), divides by 448 in fp32, and for ue8m0 rounds up to a power of two (golden)', () => {
    expect(dsaIndexKeyScale(448, 'fp32')).toBe(1);
    expect(dsaIndexKeyScale(448, 'ue8m0')).toBe(1);
    expect(dsaIndexKeyScale(449, 'ue8m0')).toBe(2);
    expect(dsaIndexKeyScale(1, 'ue8m0')).toBe(2 ** -8); // 1/448 ∈ (2^-9, 2^-8]
    expect(dsaIndexKeyScale(0, 'ue8m0')).toBe(2 ** -22); // 1e-4/448 ≈ 2.23e-7 ∈ (2^-23, 2^-22]
    expect(dsaIndexKeyScale(0, 'fp32')).toBe(dsaIndexKeyScale(1e-4, 'fp32'));
    expect(dsaIndexKeyScale(5e-5, 'fp32')).toBe(dsaIndexKeyScale(0, 'fp32'));
    expect(dsaIndexKeyScale(224, 'fp32')).toBe(0.5);
  });

  it('is the fp32 nearest to a/448 (fp32) or the smallest power of two not below it (ue8m0)', () => {
    fc.assert(
      fc.property(fc.float({ min: 0, max: Math.fround(1e30), noNaN: true }), (amax) => {
        const a = Math.max(amax, Math.fround(1e-4));
        const r = dsaIndexKeyScale(amax, 'fp32');
        expect(Math.fround(r)).toBe(r);
        expect(Math.abs(r * 448 - a)).toBeLessThanOrEqual(2 ** -24 * r * 448);
        const s = dsaIndexKeyScale(amax, 'ue8m0');
        expect(Number.isInteger(Math.log2(s))).toBe(true);
        expect(s).toBeGreaterThanOrEqual(r);
        expect(s / 2).toBeLessThan(r);
      }),
    );
  });

  it('rejects a negative or non-finite amax and an unknown format', () => {
    expect(() => dsaIndexKeyScale(-1, 'fp32')).toThrow(DsaArgumentError);
    expect(() => dsaIndexKeyScale(Number.NaN, 'fp32')).toThrow(/amax/);
    expect(() => dsaIndexKeyScale(1, 'bf16' as DsaScaleFormat)).toThrow(/scaleFormat/);
  });
});

describe('dsaQuantizeIndexKeys', () => {
  it('encodes golden tokens: RNE with ties to even, subnormals, −0, saturation', () => {
    const k = token(448, 224, 1, -3.5, -0, 2 ** -9, 2 ** -10, 3 * 2 ** -10, 17, -19);
    for (const format of formats) {
      const { values, scales } = dsaQuantizeIndexKeys(k, 1, format);
      expect(scales[0]).toBe(1);
      // 448 = 1.75·2^8, 224, 1, −3.5, −0, 2^-9 (smallest subnormal), 2^-10 (tie → 0), 1.5·2^-9 (tie → 2^-8), 17 (tie → 16), −19 (tie → −20).
      expect(Array.from(values.subarray(0, 10))).toEqual([0x7e, 0x76, 0x38, 0xc6, 0x80, 0x01, 0x00, 0x02, 0x58, 0xda]);
      expect(values.subarray(10).every((v) => v === 0)).toBe(true);
    }
    // ue8m0 with amax 449: s = 2, 449/2 = 224.5 → 224; amax 1: s = 2^-8, 1/s = 256.
    expect(dsaQuantizeIndexKeys(token(449), 1, 'ue8m0').values[0]).toBe(0x76);
    const small = dsaQuantizeIndexKeys(token(1, -0.5), 1, 'ue8m0');
    expect([small.scales[0], small.values[0], small.values[1]]).toEqual([2 ** -8, 0x78, 0xf0]);
    // fp32 with amax 1: s ≈ 1/448, so the amax element lands on 448.
    expect(dsaQuantizeIndexKeys(token(0.25, -1), 1, 'fp32').values[1]).toBe(0xfe);
  });

  it('gives a +0 token all-zero values and the floor scale; a −0 token all 0x80', () => {
    const zero = dsaQuantizeIndexKeys(new Float32Array(2 * D), 2, 'ue8m0');
    expect(zero.values.every((v) => v === 0)).toBe(true);
    expect(Array.from(zero.scales)).toEqual([2 ** -22, 2 ** -22]);
    expect(dsaQuantizeIndexKeys(new Float32Array(D).fill(-0), 1, 'fp32').values.every((v) => v === 0x80)).toBe(true);
    expect(dsaQuantizeIndexKeys(new Float32Array(0), 0, 'fp32').scales.length).toBe(0);
  });

  it('rounds k/s (fp32) to the nearest e4m3, within half an ulp plus the fp32 quotient rounding, never past 448', () => {
    fc.assert(
      fc.property(keysArb, fc.constantFrom(...formats), ({ tokens, keys }, format) => {
        const { values, scales } = dsaQuantizeIndexKeys(keys, tokens, format);
        for (let t = 0; t < tokens; t++) {
          const s = scales[t]!;
          for (let i = t * D; i < (t + 1) * D; i++) {
            const y = Math.fround(keys[i]! / s);
            expect(values[i]).toBe(nearestE4m3(y));
            const back = e4m3(values[i]!) * s;
            expect(Math.abs(e4m3(values[i]!))).toBeLessThanOrEqual(448);
            expect(Math.abs(back - keys[i]!)).toBeLessThanOrEqual(
              s * halfUlpE4m3(Math.max(Math.abs(y), Math.abs(keys[i]! / s))) + 2 ** -24 * Math.abs(keys[i]!),
            );
          }
        }
      }),
    );
  });

  it('maps the amax element to ±448 (fp32) or into [224, 448] (ue8m0) once amax ≥ 1e-4', () => {
    fc.assert(
      fc.property(keysArb, fc.constantFrom(...formats), ({ tokens, keys }, format) => {
        const { values } = dsaQuantizeIndexKeys(keys, tokens, format);
        for (let t = 0; t < tokens; t++) {
          const row = Array.from(keys.subarray(t * D, (t + 1) * D), Math.abs);
          const amax = Math.max(...row);
          if (amax < 1e-4) continue;
          const top = Math.abs(e4m3(values[t * D + row.indexOf(amax)]!));
          if (format === 'fp32') expect(top).toBe(448);
          else expect(top >= 224 && top <= 448).toBe(true);
        }
      }),
    );
  });

  it('commutes with negation (sign bits flip) and with power-of-two scaling (scales scale, values stay)', () => {
    fc.assert(
      fc.property(normalKeysArb, fc.constantFrom(...formats), fc.integer({ min: -12, max: 12 }), ({ tokens, keys }, format, j) => {
        const base = dsaQuantizeIndexKeys(keys, tokens, format);
        const negated = dsaQuantizeIndexKeys(
          keys.map((x) => -x),
          tokens,
          format,
        );
        expect(negated.scales).toEqual(base.scales);
        expect(Array.from(negated.values)).toEqual(Array.from(base.values, (v) => v ^ 0x80));
        const scaled = keys.map((x) => x * 2 ** j);
        for (let t = 0; t < tokens; t++) {
          const amax = Math.max(...Array.from(keys.subarray(t * D, (t + 1) * D), Math.abs));
          fc.pre(amax >= 1e-4 && amax * 2 ** j >= 1e-4);
        }
        fc.pre(scaled.every((x, i) => x === keys[i]! * 2 ** j));
        const moved = dsaQuantizeIndexKeys(scaled, tokens, format);
        expect(Array.from(moved.values)).toEqual(Array.from(base.values));
        expect(Array.from(moved.scales)).toEqual(Array.from(base.scales, (s) => s * 2 ** j));
      }),
    );
  });

  it('rejects bad token counts, lengths, non-finite keys and formats', () => {
    expect(() => dsaQuantizeIndexKeys(new Float32Array(D), 2, 'fp32')).toThrow(/keys.*tokens·128/);
    expect(() => dsaQuantizeIndexKeys(new Float32Array(D), -1, 'fp32')).toThrow(/tokens/);
    expect(() => dsaQuantizeIndexKeys(token(1, Number.NaN), 1, 'fp32')).toThrow(/keys\[1\]/);
    expect(() => dsaQuantizeIndexKeys(token(Infinity), 1, 'ue8m0')).toThrow(DsaArgumentError);
    expect(() => dsaQuantizeIndexKeys(token(1), 1, 'e8m0' as DsaScaleFormat)).toThrow(/scaleFormat/);
  });
});

describe('dsaDequantizeIndexKey', () => {
  it('returns decode(value)·scale exactly and inverts the quantizer within its error', () => {
    fc.assert(
      fc.property(keysArb, fc.constantFrom(...formats), ({ tokens, keys }, format) => {
        const { values, scales } = dsaQuantizeIndexKeys(keys, tokens, format);
        for (let t = 0; t < tokens; t++) {
          const row = values.subarray(t * D, (t + 1) * D);
          const back = dsaDequantizeIndexKey({ values: row, scale: scales[t]! });
          expect(Array.from(back)).toEqual(Array.from(row, (v) => e4m3(v) * scales[t]!));
          for (let i = 0; i < D; i++)
            expect(Math.abs(back[i]! - keys[t * D + i]!)).toBeLessThanOrEqual(scales[t]! * 16 + 2 ** -24 * Math.abs(keys[t * D + i]!));
        }
      }),
    );
  });

  it('rejects a short row and NaN patterns', () => {
    expect(() => dsaDequantizeIndexKey({ values: new Uint8Array(127), scale: 1 })).toThrow(/token.values/);
    const nan = new Uint8Array(D);
    nan[5] = 0xff;
    expect(() => dsaDequantizeIndexKey({ values: nan, scale: 1 })).toThrow(/token.values\[5\]/);
  });
});
