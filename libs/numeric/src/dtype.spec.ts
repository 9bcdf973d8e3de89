// The registry against the format specifications (values written out by hand from the specs).
import { describe, expect, it } from 'vitest';
import { decode } from './conversion.ts';
import { dtypeNames, dtypes, getDType, isDTypeName, resolveDType, type DTypeName } from './dtype.ts';
import { ArgumentError } from './tilekitError.ts';

type Facts = [
  name: DTypeName,
  bits: number,
  max: number,
  minNormal: number,
  minSubnormal: number,
  mantissaBits: number,
  exponentBits: number,
  bias: number,
  hasInfinity: boolean,
  hasNegativeZero: boolean,
];

const floatFacts: Facts[] = [
  ['fp32', 32, (2 - 2 ** -23) * 2 ** 127, 2 ** -126, 2 ** -149, 23, 8, 127, true, true],
  ['fp16', 16, 65504, 2 ** -14, 2 ** -24, 10, 5, 15, true, true],
  ['bf16', 16, (2 - 2 ** -7) * 2 ** 127, 2 ** -126, 2 ** -133, 7, 8, 127, true, true],
  ['fp8e4m3fn', 8, 448, 2 ** -6, 2 ** -9, 3, 4, 7, false, true],
  ['fp8e5m2', 8, 57344, 2 ** -14, 2 ** -16, 2, 5, 15, true, true],
  ['fp8e4m3fnuz', 8, 240, 2 ** -7, 2 ** -10, 3, 4, 8, false, false],
  ['fp8e5m2fnuz', 8, 57344, 2 ** -15, 2 ** -17, 2, 5, 16, false, false],
];

describe('dtypes registry', () => {
  it('lists every dtype once, in the registry and in dtypeNames', () => {
    expect([...dtypeNames].sort()).toEqual(Object.keys(dtypes).sort());
    expect(new Set(dtypeNames).size).toBe(11);
    for (const name of dtypeNames) expect(dtypes[name].name).toBe(name);
  });

  it.each(floatFacts)('%s matches its specification', (name, bits, max, minNormal, minSubnormal, mant, exp, bias, inf, negZero) => {
    const d = dtypes[name];
    expect(d).toMatchObject({ kind: 'float', bits, bytes: bits / 8, signed: true, max, lowest: -max, minNormal, minSubnormal });
    expect(d).toMatchObject({ mantissaBits: mant, exponentBits: exp, exponentBias: bias, hasInfinity: inf, hasNegativeZero: negZero });
    expect(d.epsilon).toBe(2 ** -mant);
    expect(1 + exp + mant).toBe(bits);
    expect(d.integerRange).toBeNull();
    expect(d.nanEncodings).toMatch(/NaN|0x/);
  });

  it.each([
    ['int8', 8, -128, 127, true, 'int8_t'],
    ['uint8', 8, 0, 255, false, 'uint8_t'],
    ['int32', 32, -(2 ** 31), 2 ** 31 - 1, true, 'int32_t'],
  ] as const)('%s matches its specification', (name, bits, lowest, max, signed, cpp) => {
    const d = dtypes[name];
    expect(d).toMatchObject({ kind: 'int', bits, bytes: bits / 8, lowest, max, signed, minNormal: 1, minSubnormal: 1, epsilon: 1 });
    expect(d).toMatchObject({ mantissaBits: 0, exponentBits: 0, exponentBias: 0, hasInfinity: false, hasNegativeZero: false });
    expect(d.cppType).toEqual({ cuda: cpp, hip: cpp, host: cpp });
    expect(d.integerRange).toEqual({ min: BigInt(lowest), max: BigInt(max) });
  });

  it('int64 has exact bigint bounds and float64-rounded number bounds', () => {
    expect(dtypes.int64.integerRange).toEqual({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    expect(dtypes.int64.max).toBe(2 ** 63);
    expect(dtypes.int64.lowest).toBe(-(2 ** 63));
    expect(dtypes.int64.cppType.cuda).toBe('int64_t');
  });

  it('names the C++ types of each target', () => {
    expect(dtypes.fp32.cppType).toEqual({ cuda: 'float', hip: 'float', host: 'float' });
    expect(dtypes.fp16.cppType).toEqual({ cuda: '__half', hip: '__half', host: 'uint16_t' });
    expect(dtypes.bf16.cppType).toEqual({ cuda: '__nv_bfloat16', hip: '__hip_bfloat16', host: 'uint16_t' });
    expect(dtypes.fp8e4m3fn.cppType).toEqual({ cuda: '__nv_fp8_e4m3', hip: '__hip_fp8_e4m3', host: 'uint8_t' });
    expect(dtypes.fp8e5m2.cppType).toEqual({ cuda: '__nv_fp8_e5m2', hip: '__hip_fp8_e5m2', host: 'uint8_t' });
    expect(dtypes.fp8e4m3fnuz.cppType).toEqual({ cuda: 'uint8_t', hip: '__hip_fp8_e4m3_fnuz', host: 'uint8_t' });
    expect(dtypes.fp8e5m2fnuz.cppType).toEqual({ cuda: 'uint8_t', hip: '__hip_fp8_e5m2_fnuz', host: 'uint8_t' });
    expect(dtypes.fp16.cppHeaders.cuda).toEqual(['cuda_fp16.h']);
    expect(dtypes.fp8e4m3fn.cppHeaders.hip).toEqual(['hip/hip_fp8.h']);
  });

  it('canonical NaN and infinity patterns decode as such', () => {
    for (const name of dtypeNames) {
      const d = dtypes[name];
      if (d.kind === 'int' || d.canonicalNaNBits === null) continue;
      expect(decode(d, d.canonicalNaNBits)).toBeNaN();
      if (d.infinityBits !== null) expect(decode(d, d.infinityBits)).toBe(Infinity);
    }
  });

  it('is frozen', () => {
    expect(Object.isFrozen(dtypes)).toBe(true);
    expect(Object.isFrozen(dtypes.fp16)).toBe(true);
    expect(Object.isFrozen(dtypes.fp16.cppType)).toBe(true);
    expect(Object.isFrozen(dtypes.fp16.cppHeaders.cuda)).toBe(true);
    expect(Object.isFrozen(dtypeNames)).toBe(true);
  });
});

describe('getDType / resolveDType', () => {
  it('returns the registry entry', () => {
    expect(getDType('bf16')).toBe(dtypes.bf16);
    expect(resolveDType('int8')).toBe(dtypes.int8);
    expect(resolveDType(dtypes.fp8e5m2)).toBe(dtypes.fp8e5m2);
    expect(resolveDType({ ...dtypes.fp16 })).toBe(dtypes.fp16);
    expect(isDTypeName('fp16')).toBe(true);
    expect(isDTypeName('toString')).toBe(false);
  });

  it('rejects an unknown name, naming it and listing the valid names', () => {
    expect(() => getDType('fp64')).toThrow(ArgumentError);
    expect(() => getDType('fp64')).toThrow(/"fp64"/);
    expect(() => getDType('fp64')).toThrow(/fp32, fp16, bf16, fp8e4m3fn, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, int8, uint8, int32, int64/);
    expect(() => getDType('constructor')).toThrow(ArgumentError);
    expect(() => resolveDType({ name: 'half' } as never)).toThrow(/dtype: must be a DType/);
    try {
      getDType('float8');
    } catch (error) {
      expect(error).toMatchObject({ code: 'argument/invalid', argument: 'dtype', name: 'ArgumentError' });
    }
  });
});
