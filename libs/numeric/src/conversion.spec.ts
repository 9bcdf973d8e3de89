// encode / decode / roundTo over every dtype: the algebraic properties of rounding, and argument checks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decode, encode, roundTo } from './conversion.ts';
import { dtypeNames, dtypes, type DTypeName } from './dtype.ts';
import { defaultEncodeOptions, type EncodeOptions, type Rounding } from './rounding.ts';
import { floatDTypeNameArbitrary, representableArbitrary } from './testing/arbitraries.ts';
import { ArgumentError } from './tilekitError.ts';

const roundingArb = fc.constantFrom<Rounding>('nearestEven', 'towardZero');
const optionsArb = fc.record({ saturate: fc.boolean(), rounding: roundingArb });

/** Doubles spread over the dtype's whole range and a little beyond, with extra weight near zero. */
function doublesFor(name: DTypeName): fc.Arbitrary<number> {
  const d = dtypes[name];
  return fc.oneof(
    fc.double({ min: -1.1 * d.max, max: 1.1 * d.max, noNaN: true }),
    fc.double({ min: -64 * d.minNormal, max: 64 * d.minNormal, noNaN: true }),
    fc.double({ noNaN: true }),
  );
}

/** Options under which roundTo(x) is never NaN for a non-NaN x. */
function noNaNFor(name: DTypeName, x: number, options: EncodeOptions): boolean {
  const d = dtypes[name];
  return d.hasInfinity || options.saturate === true || Math.abs(x) <= d.max;
}

const floatCase = floatDTypeNameArbitrary().chain((name) => fc.tuple(fc.constant(name), doublesFor(name), optionsArb));

describe('roundTo properties (all float dtypes)', () => {
  it('equals decode(encode(x))', () => {
    fc.assert(
      fc.property(floatCase, ([name, x, options]) => {
        const r = roundTo(name, x, options);
        const viaBits = decode(name, encode(name, x, options));
        expect(Number.isNaN(r) ? Number.isNaN(viaBits) : Object.is(r, viaBits)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(floatCase, ([name, x, options]) => {
        const once = roundTo(name, x, options);
        const twice = roundTo(name, once, options);
        expect(Number.isNaN(once) ? Number.isNaN(twice) : Object.is(twice, once)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('is monotone: x ≤ y ⇒ roundTo(x) ≤ roundTo(y)', () => {
    const pairs = floatDTypeNameArbitrary().chain((name) => fc.tuple(fc.constant(name), doublesFor(name), doublesFor(name), optionsArb));
    fc.assert(
      fc.property(pairs, ([name, a, b, options]) => {
        const [x, y] = a <= b ? [a, b] : [b, a];
        fc.pre(noNaNFor(name, x, options) && noNaNFor(name, y, options));
        expect(roundTo(name, x, options)).toBeLessThanOrEqual(roundTo(name, y, options));
      }),
      { numRuns: 3000 },
    );
  });

  it('is within half an ulp (nearest) or one ulp below |x| (toward zero), inside the range', () => {
    const inRange = floatDTypeNameArbitrary().chain((name) =>
      fc.tuple(fc.constant(name), fc.double({ min: dtypes[name].lowest, max: dtypes[name].max, noNaN: true })),
    );
    fc.assert(
      fc.property(inRange, ([name, x]) => {
        const d = dtypes[name];
        const exponent = x === 0 ? -Infinity : Math.floor(Math.log2(Math.abs(x)));
        // Spacing of representable values around x; Math.log2 may be off by one just below a
        // power of two, which only makes this bound looser by 2x there, never wrong.
        const ulp = Math.max(2 ** (exponent - d.mantissaBits), d.minSubnormal);
        const nearest = roundTo(name, x);
        expect(Math.abs(nearest - x)).toBeLessThanOrEqual(ulp / 2);
        const truncated = roundTo(name, x, { rounding: 'towardZero' });
        expect(Math.abs(truncated)).toBeLessThanOrEqual(Math.abs(x));
        expect(Math.abs(x) - Math.abs(truncated)).toBeLessThan(ulp);
        expect(truncated === 0 || Math.sign(truncated) === Math.sign(x)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('toward zero never increases |x|, even out of range', () => {
    fc.assert(
      fc.property(floatCase, ([name, x, options]) => {
        fc.pre(Number.isFinite(x));
        const t = roundTo(name, x, { ...options, rounding: 'towardZero' });
        expect(Math.abs(t)).toBeLessThanOrEqual(Math.abs(x));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves representable values unchanged under every option', () => {
    const representable = floatDTypeNameArbitrary().chain((name) => fc.tuple(fc.constant(name), representableArbitrary(name), optionsArb));
    fc.assert(
      fc.property(representable, ([name, v, options]) => {
        expect(Object.is(roundTo(name, v, options), v) || (v === 0 && !dtypes[name].hasNegativeZero)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('fp32 roundTo is Math.fround by default', () => {
    fc.assert(
      fc.property(fc.double(), (x) => {
        expect(Object.is(roundTo('fp32', x), Math.fround(x))).toBe(true);
      }),
    );
  });
});

describe('options and arguments', () => {
  it('defaults: floats round to nearest even without saturating; integers truncate and saturate', () => {
    expect(defaultEncodeOptions(dtypes.fp8e4m3fn)).toEqual({ saturate: false, rounding: 'nearestEven' });
    expect(defaultEncodeOptions(dtypes.int8)).toEqual({ saturate: true, rounding: 'towardZero' });
    expect(encode('fp8e4m3fn', 500)).toBe(0x7f);
    expect(encode('fp8e4m3fn', 500, {})).toBe(0x7f);
    expect(encode('fp8e4m3fn', 500, { rounding: 'nearestEven' })).toBe(0x7f);
  });

  it('accepts a DType object wherever a name is accepted', () => {
    expect(encode(dtypes.fp16, 1)).toBe(0x3c00);
    expect(decode(dtypes.bf16, 0x3f80)).toBe(1);
    expect(roundTo(dtypes.fp8e5m2, 1.1)).toBe(1);
  });

  it('rejects malformed options, values, patterns and dtypes', () => {
    expect(() => encode('fp16', 1, { rounding: 'up' as Rounding })).toThrow(
      /options.rounding: must be one of nearestEven, towardZero \(got "up"\)/,
    );
    expect(() => encode('fp16', 1, { saturate: 'yes' as unknown as boolean })).toThrow(/options.saturate/);
    expect(() => encode('fp16', 1n as unknown as number)).toThrow(/value: must be a number \(got 1n\)/);
    expect(() => roundTo('fp16', '1' as unknown as number)).toThrow(ArgumentError);
    expect(() => decode('fp16', 0x10000)).toThrow(/bits: must be an integer bit pattern in \[0, 2\^16\) for fp16/);
    expect(() => decode('fp8e4m3fn', -1)).toThrow(ArgumentError);
    expect(() => decode('fp32', 1.5)).toThrow(ArgumentError);
    expect(() => encode('half' as DTypeName, 1)).toThrow(/dtype: must be one of/);
    expect(() => encode('fp16', 1, null as unknown as EncodeOptions)).toThrow(/options: must be an object/);
  });

  it('decode accepts every pattern of every ≤32-bit dtype', () => {
    for (const name of dtypeNames) {
      if (name === 'int64') continue;
      const top = 2 ** dtypes[name].bits - 1;
      expect(() => decode(name, 0)).not.toThrow();
      expect(() => decode(name, top)).not.toThrow();
    }
  });
});
