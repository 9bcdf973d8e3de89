import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkTiledTensorMap, type TiledTensorMapOptions } from './tensorMap.ts';

// A row-major 48 x 64 fp16 matrix, 128-byte rows, with a 64 x 16 box and 128-byte swizzle.
const base: TiledTensorMapOptions = {
  dtype: 'float16',
  address: 0x7f0000000000n,
  globalDims: [64, 48],
  globalStrides: [128],
  boxDims: [64, 16],
  swizzle: '128B',
};

function argumentOf(options: TiledTensorMapOptions): string | undefined {
  try {
    checkTiledTensorMap(options);
  } catch (error) {
    if (error instanceof ArgumentError) return error.argument;
    throw error;
  }
  return undefined;
}

describe('checkTiledTensorMap', () => {
  it('maps names to the driver enum values', () => {
    expect(checkTiledTensorMap(base)).toEqual({
      dtype: 6,
      rank: 2,
      address: 0x7f0000000000n,
      globalDims: [64n, 48n],
      globalStrides: [128n],
      boxDims: [64, 16],
      elementStrides: [1, 1],
      interleave: 0,
      swizzle: 3,
      l2Promotion: 0,
      oobFill: 0,
    });
    expect(checkTiledTensorMap({ ...base, dtype: 'bfloat16', l2Promotion: '256B', oobFill: 'nanRequestZeroFma' })).toMatchObject({
      dtype: 9,
      l2Promotion: 3,
      oobFill: 1,
    });
    expect(checkTiledTensorMap({ ...base, address: { ptr: 0x7f0000000100n } }).address).toBe(0x7f0000000100n);
  });

  it('names the argument that breaks a driver rule', () => {
    expect(argumentOf({ ...base, dtype: 'float8' as never })).toBe('dtype');
    expect(argumentOf({ ...base, address: 0x7f0000000008n })).toBe('address');
    expect(argumentOf({ ...base, address: 0n })).toBe('address');
    expect(argumentOf({ ...base, globalDims: [], globalStrides: [], boxDims: [] })).toBe('globalDims');
    expect(argumentOf({ ...base, globalDims: [1, 1, 1, 1, 1, 1], globalStrides: [16, 16, 16, 16, 16], boxDims: [8, 1, 1, 1, 1, 1] })).toBe(
      'globalDims',
    );
    expect(argumentOf({ ...base, globalStrides: [] })).toBe('globalStrides');
    expect(argumentOf({ ...base, globalStrides: [120] })).toBe('globalStrides[0]');
    expect(argumentOf({ ...base, globalStrides: [2 ** 40] })).toBe('globalStrides[0]');
    expect(argumentOf({ ...base, globalDims: [0, 48] })).toBe('globalDims[0]');
    expect(argumentOf({ ...base, globalDims: [64, 2 ** 32 + 1] })).toBe('globalDims[1]');
    expect(argumentOf({ ...base, boxDims: [64, 257] })).toBe('boxDims[1]');
    expect(argumentOf({ ...base, boxDims: [4, 16], swizzle: 'none' })).toBe('boxDims[0]');
    expect(argumentOf({ ...base, boxDims: [128, 16] })).toBe('boxDims[0]');
    expect(argumentOf({ ...base, swizzle: '64B' })).toBe('boxDims[0]');
    expect(argumentOf({ ...base, elementStrides: [1, 9] })).toBe('elementStrides[1]');
    expect(argumentOf({ ...base, elementStrides: [1] })).toBe('elementStrides');
    expect(argumentOf({ ...base, interleave: '16B' })).toBe('globalDims');
    expect(argumentOf({ ...base, dtype: 'int32', oobFill: 'nanRequestZeroFma', boxDims: [32, 16] })).toBe('oobFill');
    expect(
      argumentOf({
        ...base,
        interleave: '32B',
        swizzle: '64B',
        globalDims: [64, 4, 4],
        globalStrides: [128, 512],
        boxDims: [16, 4, 4],
      }),
    ).toBe('swizzle');
  });
});
