// Exhaustive checks of every bit pattern of the 16- and 8-bit float formats, plus a brute-force
// nearest-value oracle for random doubles. Failures are collected and compared once per loop, so
// a 2^16 loop costs milliseconds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, encode } from './conversion.ts';
import { dtypes, type DTypeName } from './dtype.ts';
import { defineFloatFormat, isNaNBits } from './floatFormat.ts';
import { nextDown, nextUp } from './testing/float64Neighbours.ts';
import { ArgumentError } from './tilekitError.ts';

const smallFloats = ['fp16', 'bf16', 'fp8e4m3fn', 'fp8e5m2', 'fp8e4m3fnuz', 'fp8e5m2fnuz'] as const satisfies readonly DTypeName[];

describe.each(smallFloats)('%s, every bit pattern', (name) => {
  const d = dtypes[name];
  const count = 2 ** d.bits;
  const signBit = count / 2;
  const mantissaScale = 2 ** d.mantissaBits;
  const allOnesExponent = 2 ** d.exponentBits - 1;
  const specials = !d.hasNegativeZero ? 'fnuz' : d.hasInfinity ? 'ieee' : 'fn';
  const values = Float64Array.from({ length: count }, (_, bits) => decode(d, bits));
  const maxMagnitude = values.indexOf(d.max);
  const canonicalNaN = d.canonicalNaNBits!;
  const overflowBits = (negative: boolean): number =>
    specials === 'ieee'
      ? (negative ? signBit : 0) + d.infinityBits!
      : specials === 'fn' && negative
        ? signBit + canonicalNaN
        : canonicalNaN;

  it('round-trips decode → encode for every non-NaN pattern, under every option', () => {
    const failures: string[] = [];
    for (let bits = 0; bits < count; bits++) {
      const v = values[bits]!;
      if (Number.isNaN(v)) {
        if (encode(d, v) !== canonicalNaN) failures.push(`NaN pattern ${bits}`);
        continue;
      }
      for (const options of [{}, { saturate: true }, { rounding: 'towardZero' as const }]) {
        const back = encode(d, v, options);
        const expected = Number.isFinite(v) || !('saturate' in options) ? bits : (v > 0 ? 0 : signBit) + maxMagnitude;
        if (back !== expected) failures.push(`${bits} -> ${v} -> ${back} with ${JSON.stringify(options)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('has exactly the specified NaN patterns', () => {
    const nans = [...values.keys()].filter((bits) => Number.isNaN(values[bits]));
    if (specials === 'ieee') {
      const expected: number[] = [];
      for (const sign of [0, signBit]) {
        for (let m = 1; m < mantissaScale; m++) expected.push(sign + allOnesExponent * mantissaScale + m);
      }
      expect(nans).toEqual(expected);
    } else if (specials === 'fn') {
      expect(nans).toEqual([signBit - 1, count - 1]);
    } else {
      expect(nans).toEqual([signBit]);
    }
    expect(Number.isNaN(values[canonicalNaN])).toBe(true);
  });

  it('has ±Inf only where specified, and signed zeros unless fnuz', () => {
    const infinities = [...values.keys()].filter((bits) => Math.abs(values[bits]!) === Infinity);
    if (specials === 'ieee') {
      expect(infinities).toEqual([d.infinityBits, signBit + d.infinityBits!]);
      expect(values[d.infinityBits!]).toBe(Infinity);
      expect(values[signBit + d.infinityBits!]).toBe(-Infinity);
      expect(encode(d, Infinity)).toBe(d.infinityBits);
      expect(encode(d, -Infinity)).toBe(signBit + d.infinityBits!);
    } else {
      expect(infinities).toEqual([]);
      expect(d.infinityBits).toBeNull();
    }
    expect(Object.is(values[0], 0)).toBe(true);
    expect(encode(d, 0)).toBe(0);
    if (specials === 'fnuz') {
      expect(encode(d, -0)).toBe(0);
    } else {
      expect(Object.is(values[signBit], -0)).toBe(true);
      expect(encode(d, -0)).toBe(signBit);
    }
  });

  it('decodes subnormals as multiples of minSubnormal, continuing into the first normal', () => {
    for (let m = 0; m <= mantissaScale; m++) expect(values[m]).toBe(m * d.minSubnormal);
    expect(values[mantissaScale]).toBe(d.minNormal);
    expect(values[1]).toBe(d.minSubnormal);
  });

  it('is strictly increasing in magnitude order, and symmetric in sign', () => {
    const failures: number[] = [];
    for (let mag = 1; mag <= maxMagnitude; mag++) {
      if (!(values[mag]! > values[mag - 1]!)) failures.push(mag);
      if (values[signBit + mag] !== -values[mag]!) failures.push(signBit + mag);
    }
    expect(failures).toEqual([]);
    const finite = [...values].filter(Number.isFinite);
    expect(Math.max(...finite)).toBe(d.max);
    expect(Math.min(...finite)).toBe(d.lowest);
    expect(values[encode(d, 1) + 1]! - 1).toBe(d.epsilon);
  });

  it('rounds every midpoint to the even pattern, just off it to the nearer value, toward zero downward', () => {
    const failures: string[] = [];
    for (let mag = 0; mag < maxMagnitude; mag++) {
      const lo = values[mag]!;
      const hi = values[mag + 1]!;
      const mid = (lo + hi) / 2; // exact: both have far fewer than 52 significant bits
      const even = mag % 2 === 0 ? mag : mag + 1;
      const cases: Array<[number, number, 'nearestEven' | 'towardZero']> = [
        [mid, even, 'nearestEven'],
        [nextUp(mid), mag + 1, 'nearestEven'],
        [nextDown(mid), mag, 'nearestEven'],
        [mid, mag, 'towardZero'],
        [nextDown(hi), mag, 'towardZero'],
      ];
      for (const [x, expected, rounding] of cases) {
        if (encode(d, x, { rounding }) !== expected) failures.push(`${x} ${rounding}`);
        const negExpected = specials === 'fnuz' && expected === 0 ? 0 : signBit + expected;
        if (encode(d, -x, { rounding }) !== negExpected) failures.push(`${-x} ${rounding}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('overflows past max + ½ulp (ties to even) to Inf or NaN, or to ±max when saturating or truncating', () => {
    const ulp = values[maxMagnitude]! - values[maxMagnitude - 1]!;
    const threshold = d.max + ulp / 2;
    const tieStays = maxMagnitude % 2 === 0;
    for (const sign of [1, -1]) {
      const negative = sign < 0;
      const max = (negative ? signBit : 0) + maxMagnitude;
      expect(encode(d, sign * nextDown(threshold))).toBe(max);
      expect(encode(d, sign * threshold)).toBe(tieStays ? max : overflowBits(negative));
      expect(encode(d, sign * nextUp(threshold))).toBe(overflowBits(negative));
      expect(encode(d, sign * 1e300)).toBe(overflowBits(negative));
      expect(encode(d, sign * Infinity)).toBe(overflowBits(negative));
      for (const options of [{ saturate: true }, { saturate: true, rounding: 'towardZero' as const }]) {
        expect(encode(d, sign * nextUp(threshold), options)).toBe(max);
        expect(encode(d, sign * Infinity, options)).toBe(max);
        expect(encode(d, sign * Number.MAX_VALUE, options)).toBe(max);
      }
      expect(encode(d, sign * Number.MAX_VALUE, { rounding: 'towardZero' })).toBe(max);
    }
  });

  it('underflows below ½minSubnormal to a zero of the same sign (unsigned for fnuz)', () => {
    const negativeZero = specials === 'fnuz' ? 0 : signBit;
    expect(encode(d, d.minSubnormal / 2)).toBe(0); // tie: 0 is even
    expect(encode(d, nextUp(d.minSubnormal / 2))).toBe(1);
    expect(encode(d, -d.minSubnormal / 2)).toBe(negativeZero);
    expect(encode(d, -nextUp(d.minSubnormal / 2))).toBe(signBit + 1);
    expect(encode(d, Number.MIN_VALUE)).toBe(0);
    expect(encode(d, -Number.MIN_VALUE)).toBe(negativeZero);
    expect(encode(d, nextDown(d.minSubnormal), { rounding: 'towardZero' })).toBe(0);
  });

  it('agrees with a brute-force nearest-value oracle on random doubles', () => {
    const magnitudes = Array.from(values.subarray(0, maxMagnitude + 1));
    const oracle = (x: number, towardZero: boolean): number => {
      const a = Math.abs(x);
      let lo = 0; // largest magnitude pattern with value <= a
      let hi = maxMagnitude;
      while (lo < hi) {
        const m = Math.ceil((lo + hi) / 2);
        if (magnitudes[m]! <= a) lo = m;
        else hi = m - 1;
      }
      let mag = lo;
      if (!towardZero && magnitudes[lo]! < a && lo < maxMagnitude) {
        const below = a - magnitudes[lo]!;
        const above = magnitudes[lo + 1]! - a;
        if (above < below || (above === below && lo % 2 === 1)) mag = lo + 1;
      }
      if (x < 0 || Object.is(x, -0)) return specials === 'fnuz' && mag === 0 ? 0 : signBit + mag;
      return mag;
    };
    const inRange = fc.oneof(
      fc.double({ min: d.lowest, max: d.max, noNaN: true }),
      fc.double({ min: -d.minNormal * 4, max: d.minNormal * 4, noNaN: true }),
      fc
        .integer({ min: 0, max: maxMagnitude - 1 })
        .chain((mag) => fc.double({ min: values[mag]!, max: values[mag + 1]!, noNaN: true }).map((x) => (mag % 3 === 0 ? -x : x))),
    );
    fc.assert(
      fc.property(inRange, fc.boolean(), (x, towardZero) => {
        expect(encode(d, x, { rounding: towardZero ? 'towardZero' : 'nearestEven' })).toBe(oracle(x, towardZero));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('defineFloatFormat', () => {
  const e4m3 = { name: 'e4m3', exponentBits: 4, mantissaBits: 3, exponentBias: 7, specials: 'fn', canonicalNaN: 0x7f } as const;

  it('derives the constants of a format', () => {
    expect(defineFloatFormat(e4m3)).toMatchObject({
      bits: 8,
      signBit: 0x80,
      maxFiniteMagnitude: 0x7e,
      infinityMagnitude: null,
      minExponent: -6,
    });
    expect(isNaNBits(defineFloatFormat(e4m3), 0xff)).toBe(true);
  });

  it('rejects specs it cannot convert exactly', () => {
    expect(() => defineFloatFormat({ ...e4m3, mantissaBits: 0 })).toThrow(/spec.mantissaBits: must be an integer in \[1, 23\]/);
    expect(() => defineFloatFormat({ ...e4m3, exponentBits: 11, mantissaBits: 20 })).toThrow(ArgumentError);
    expect(() => defineFloatFormat({ ...e4m3, exponentBits: 8, mantissaBits: 23, exponentBias: 127.5 })).toThrow(/exponentBias/);
    expect(() => defineFloatFormat({ ...e4m3, canonicalNaN: 0x7e })).toThrow(/spec.canonicalNaN: must be a NaN bit pattern of e4m3/);
  });
});
