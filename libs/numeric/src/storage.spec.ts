// Packed storage: array classes per dtype, round trips, element access and argument checks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encode, roundTo } from './conversion.ts';
import { dtypeNames, dtypes } from './dtype.ts';
import { allocStorage, decodeArray, encodeArray, setStorageElement, storageConstructorOf, storageElement } from './storage.ts';
import { dtypeNameArbitrary, representableArbitrary } from './testing/arbitraries.ts';
import { ArgumentError } from './tilekitError.ts';

const same = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

describe('storage', () => {
  it('allocates the documented typed array, zero-filled', () => {
    const expected = {
      fp32: Float32Array,
      fp16: Uint16Array,
      bf16: Uint16Array,
      fp8e4m3fn: Uint8Array,
      fp8e5m2: Uint8Array,
      fp8e4m3fnuz: Uint8Array,
      fp8e5m2fnuz: Uint8Array,
      int8: Int8Array,
      uint8: Uint8Array,
      int32: Int32Array,
      int64: BigInt64Array,
    } as const;
    for (const name of dtypeNames) {
      const s = allocStorage(name, 3);
      expect(s).toBeInstanceOf(expected[name]);
      expect(s.length).toBe(3);
      expect(storageConstructorOf(name)).toBe(expected[name]);
      expect(s.BYTES_PER_ELEMENT).toBe(dtypes[name].bytes);
      expect([...decodeArray(name, s)]).toEqual([0, 0, 0]);
    }
    const typed: Uint16Array = allocStorage('fp16', 1); // the static type follows the dtype
    expect(typed).toBeInstanceOf(Uint16Array);
  });

  it('encodeArray then decodeArray gives roundTo of each element', () => {
    fc.assert(
      fc.property(
        dtypeNameArbitrary(),
        fc.array(fc.double(), { maxLength: 20 }),
        fc.record({ saturate: fc.boolean(), rounding: fc.constantFrom('nearestEven' as const, 'towardZero' as const) }),
        (name, values, options) => {
          const decoded = decodeArray(name, encodeArray(name, values, options));
          expect(decoded.length).toBe(values.length);
          values.forEach((v, i) => expect(same(decoded[i]!, roundTo(name, v, options))).toBe(true));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stores bit patterns for fp16/bf16/fp8 and values for the rest', () => {
    expect([...encodeArray('fp16', [1, -2, 65504])]).toEqual([0x3c00, 0xc000, 0x7bff]);
    expect([...encodeArray('bf16', [1])]).toEqual([0x3f80]);
    expect([...encodeArray('fp8e4m3fn', [448, NaN])]).toEqual([0x7e, 0x7f]);
    expect([...encodeArray('int8', [-1, 300])]).toEqual([-1, 127]);
    expect([...encodeArray('int64', [-1, 2 ** 70])]).toEqual([-1n, 2n ** 63n - 1n]);
    expect([...encodeArray('fp32', [1 + 2 ** -30])]).toEqual([1]);
    expect([...encodeArray('fp32', [1e39], { saturate: true })]).toEqual([(2 - 2 ** -23) * 2 ** 127]);
  });

  it('round-trips representable values exactly through setStorageElement / storageElement', () => {
    const cases = dtypeNameArbitrary().chain((name) =>
      fc.tuple(fc.constant(name), fc.array(representableArbitrary(name), { minLength: 1, maxLength: 8 })),
    );
    fc.assert(
      fc.property(cases, ([name, values]) => {
        const s = allocStorage(name, values.length);
        values.forEach((v, i) => setStorageElement(name, s, i, v));
        values.forEach((v, i) => expect(same(storageElement(name, s, i), v) || (v === 0 && storageElement(name, s, i) === 0)).toBe(true));
        const packed = encodeArray(name, values);
        expect([...packed]).toEqual([...s]);
      }),
      { numRuns: 300 },
    );
  });

  it('setStorageElement applies the options', () => {
    const s = allocStorage('fp8e4m3fn', 2);
    setStorageElement('fp8e4m3fn', s, 0, 1000);
    setStorageElement(dtypes.fp8e4m3fn, s, 1, 1000, { saturate: true });
    expect([...s]).toEqual([0x7f, 0x7e]);
    expect(storageElement('fp8e4m3fn', s, 0)).toBeNaN();
    expect(storageElement('fp8e4m3fn', s, 1)).toBe(448);
    const h = allocStorage('fp16', 1);
    setStorageElement('fp16', h, 0, 1 + 3 * 2 ** -11, { rounding: 'towardZero' });
    expect(h[0]).toBe(encode('fp16', 1 + 2 ** -10));
  });

  it('rejects the wrong array class, bad indices and bad lengths', () => {
    const h = allocStorage('fp16', 2);
    expect(() => decodeArray('fp32', h)).toThrow(/storage: must be a Float32Array for fp32 \(got "Uint16Array"\)/);
    expect(() => storageElement('fp8e4m3fn', h, 0)).toThrow(ArgumentError);
    expect(() => storageElement('fp16', h, 2)).toThrow(/i: must be an integer index in \[0, 2\) \(got 2\)/);
    expect(() => setStorageElement('fp16', h, -1, 0)).toThrow(ArgumentError);
    expect(() => setStorageElement('fp16', h, 0.5, 0)).toThrow(ArgumentError);
    expect(() => setStorageElement('fp16', h, 0, 'x' as unknown as number)).toThrow(/value: must be a number/);
    expect(() => allocStorage('fp16', -1)).toThrow(/length: must be a non-negative safe integer/);
    expect(() => allocStorage('fp16', 1.5)).toThrow(ArgumentError);
    expect(() => decodeArray('int8', [1, 2] as unknown as Int8Array)).toThrow(/got "Array"/);
    expect(() => encodeArray('fp16', [1, undefined, 3] as unknown as number[])).toThrow(/values\[1\]: must be a number/);
    expect(() => encodeArray('int64', ['1'] as unknown as number[])).toThrow(ArgumentError);
  });

  it('int64 storage holds exact bigints and reads back as the nearest double', () => {
    const s = allocStorage('int64', 2);
    setStorageElement('int64', s, 0, -(2 ** 60));
    setStorageElement('int64', s, 1, 1e30);
    expect(s[0]).toBe(-(2n ** 60n));
    expect(s[1]).toBe(2n ** 63n - 1n);
    expect(storageElement('int64', s, 1)).toBe(2 ** 63);
  });
});
