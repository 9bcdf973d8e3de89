import { ArgumentError } from '@tilekit/numeric';
import { loadAddon } from './addon.ts';
import type { Device } from './device.ts';
import type { HasDevicePointer } from './kernelArgs.ts';

/** CUtensorMapDataType values and element sizes. */
export const TENSOR_MAP_DTYPES = {
  uint8: { code: 0, bytes: 1, float: false },
  uint16: { code: 1, bytes: 2, float: false },
  uint32: { code: 2, bytes: 4, float: false },
  int32: { code: 3, bytes: 4, float: false },
  uint64: { code: 4, bytes: 8, float: false },
  int64: { code: 5, bytes: 8, float: false },
  float16: { code: 6, bytes: 2, float: true },
  float32: { code: 7, bytes: 4, float: true },
  float64: { code: 8, bytes: 8, float: true },
  bfloat16: { code: 9, bytes: 2, float: true },
  float32Ftz: { code: 10, bytes: 4, float: true },
  tfloat32: { code: 11, bytes: 4, float: true },
  tfloat32Ftz: { code: 12, bytes: 4, float: true },
} as const;
export type TensorMapDtype = keyof typeof TENSOR_MAP_DTYPES;

/** CUtensorMapSwizzle values, with the span (bytes) the inner box row must fit in. */
export const TENSOR_MAP_SWIZZLES = {
  none: { code: 0, span: Infinity },
  '32B': { code: 1, span: 32 },
  '64B': { code: 2, span: 64 },
  '128B': { code: 3, span: 128 },
  '128B_atom32B': { code: 4, span: 128 },
  '128B_atom32B_flip8B': { code: 5, span: 128 },
  '128B_atom64B': { code: 6, span: 128 },
} as const;
export type TensorMapSwizzle = keyof typeof TENSOR_MAP_SWIZZLES;

export const TENSOR_MAP_INTERLEAVES = { none: 0, '16B': 1, '32B': 2 } as const;
export type TensorMapInterleave = keyof typeof TENSOR_MAP_INTERLEAVES;

export const TENSOR_MAP_L2_PROMOTIONS = { none: 0, '64B': 1, '128B': 2, '256B': 3 } as const;
export type TensorMapL2Promotion = keyof typeof TENSOR_MAP_L2_PROMOTIONS;

/** `zero`: out-of-bounds elements read as 0; `nanRequestZeroFma`: as a NaN that FMA treats as 0. */
export const TENSOR_MAP_OOB_FILLS = { zero: 0, nanRequestZeroFma: 1 } as const;
export type TensorMapOobFill = keyof typeof TENSOR_MAP_OOB_FILLS;

/**
 * A tiled TMA descriptor request. Dimension 0 is the innermost (contiguous) one, as in the
 * driver API. `globalStrides` are in bytes for dimensions 1..rank-1 (rank-1 entries).
 */
export interface TiledTensorMapOptions {
  readonly dtype: TensorMapDtype;
  readonly address: bigint | HasDevicePointer;
  readonly globalDims: readonly (number | bigint)[];
  readonly globalStrides: readonly (number | bigint)[];
  readonly boxDims: readonly number[];
  /** Traversal step per dimension (default all 1). */
  readonly elementStrides?: readonly number[];
  readonly interleave?: TensorMapInterleave;
  readonly swizzle?: TensorMapSwizzle;
  readonly l2Promotion?: TensorMapL2Promotion;
  readonly oobFill?: TensorMapOobFill;
}

/** The numeric arguments of `cuTensorMapEncodeTiled` after validation. */
export interface CheckedTensorMap {
  readonly dtype: number;
  readonly rank: number;
  readonly address: bigint;
  readonly globalDims: readonly bigint[];
  readonly globalStrides: readonly bigint[];
  readonly boxDims: readonly number[];
  readonly elementStrides: readonly number[];
  readonly interleave: number;
  readonly swizzle: number;
  readonly l2Promotion: number;
  readonly oobFill: number;
}

function choice<T extends Record<string, unknown>>(argument: string, table: T, value: unknown): T[keyof T] {
  if (typeof value !== 'string' || !Object.hasOwn(table, value)) {
    throw new ArgumentError(argument, `must be one of ${Object.keys(table).join(', ')}`, value);
  }
  return table[value as keyof T];
}

function toBig(argument: string, value: number | bigint): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) throw new ArgumentError(argument, 'must be an integer', value);
  return BigInt(value);
}

/**
 * Checks a tiled tensor map against the driver's documented rules, so that a bad descriptor is
 * reported by argument name instead of as CUDA_ERROR_INVALID_VALUE: rank 1..5 (>= 3 when
 * interleaved); address 16-byte aligned (32 for 32B interleave); dims in [1, 2^32]; strides
 * multiples of 16 (32 for 32B interleave) below 2^40; box dims in [1, 256] with the inner row a
 * multiple of 16 bytes and within the swizzle span; element strides in [1, 8]; 32B interleave
 * needs 32B swizzle; NaN fill only for float types.
 */
export function checkTiledTensorMap(options: TiledTensorMapOptions): CheckedTensorMap {
  const dtype = choice('dtype', TENSOR_MAP_DTYPES, options.dtype);
  const interleaveName = options.interleave ?? 'none';
  const interleave = choice('interleave', TENSOR_MAP_INTERLEAVES, interleaveName);
  const swizzleName = options.swizzle ?? 'none';
  const swizzle = choice('swizzle', TENSOR_MAP_SWIZZLES, swizzleName);
  const l2Promotion = choice('l2Promotion', TENSOR_MAP_L2_PROMOTIONS, options.l2Promotion ?? 'none');
  const oobFillName = options.oobFill ?? 'zero';
  const oobFill = choice('oobFill', TENSOR_MAP_OOB_FILLS, oobFillName);

  const rank = options.globalDims.length;
  if (rank < 1 || rank > 5) throw new ArgumentError('globalDims', 'must have 1 to 5 entries', rank);
  if (interleaveName !== 'none' && rank < 3) throw new ArgumentError('globalDims', 'must have at least 3 entries when interleaved', rank);
  if (options.globalStrides.length !== rank - 1) {
    throw new ArgumentError('globalStrides', `must have rank - 1 = ${rank - 1} entries`, options.globalStrides.length);
  }
  if (options.boxDims.length !== rank) throw new ArgumentError('boxDims', `must have rank = ${rank} entries`, options.boxDims.length);
  const elementStrides = options.elementStrides ?? new Array<number>(rank).fill(1);
  if (elementStrides.length !== rank) {
    throw new ArgumentError('elementStrides', `must have rank = ${rank} entries`, elementStrides.length);
  }

  const address = typeof options.address === 'bigint' ? options.address : options.address.ptr;
  const addressAlign = interleaveName === '32B' ? 32n : 16n;
  if (typeof address !== 'bigint' || address <= 0n || address % addressAlign !== 0n) {
    throw new ArgumentError('address', `must be a non-null device address aligned to ${addressAlign} bytes`, address);
  }
  const globalDims = options.globalDims.map((d, i) => {
    const v = toBig(`globalDims[${i}]`, d);
    if (v < 1n || v > 1n << 32n) throw new ArgumentError(`globalDims[${i}]`, 'must be in [1, 2^32]', v);
    return v;
  });
  const strideAlign = interleaveName === '32B' ? 32n : 16n;
  const globalStrides = options.globalStrides.map((s, i) => {
    const v = toBig(`globalStrides[${i}]`, s);
    if (v <= 0n || v % strideAlign !== 0n || v >= 1n << 40n) {
      throw new ArgumentError(`globalStrides[${i}]`, `must be a positive multiple of ${strideAlign} below 2^40 bytes`, v);
    }
    return v;
  });
  const boxDims = options.boxDims.map((b, i) => {
    if (!Number.isInteger(b) || b < 1 || b > 256) throw new ArgumentError(`boxDims[${i}]`, 'must be an integer in [1, 256]', b);
    return b;
  });
  elementStrides.forEach((e, i) => {
    if (!Number.isInteger(e) || e < 1 || e > 8) throw new ArgumentError(`elementStrides[${i}]`, 'must be an integer in [1, 8]', e);
  });
  const innerRowBytes = boxDims[0]! * dtype.bytes;
  if (interleaveName === 'none') {
    if (innerRowBytes % 16 !== 0) {
      throw new ArgumentError('boxDims[0]', `times the ${dtype.bytes}-byte element must be a multiple of 16 bytes`, boxDims[0]);
    }
    if (innerRowBytes > swizzle.span) {
      throw new ArgumentError('boxDims[0]', `inner box row (${innerRowBytes} bytes) must fit the ${swizzleName} swizzle span`, boxDims[0]);
    }
  }
  if (interleaveName === '32B' && swizzleName !== '32B') {
    throw new ArgumentError('swizzle', 'must be 32B when interleave is 32B', swizzleName);
  }
  if (oobFillName === 'nanRequestZeroFma' && !dtype.float) {
    throw new ArgumentError('oobFill', 'nanRequestZeroFma needs a floating-point dtype', options.dtype);
  }
  return {
    dtype: dtype.code,
    rank,
    address,
    globalDims,
    globalStrides,
    boxDims,
    elementStrides: [...elementStrides],
    interleave,
    swizzle: swizzle.code,
    l2Promotion,
    oobFill,
  };
}

/**
 * Encodes a tiled TMA descriptor (`cuTensorMapEncodeTiled`) for use on `device`, returning the
 * 128-byte CUtensorMap to pass by value as a `const __grid_constant__ CUtensorMap` kernel
 * parameter (see `KernelArgsBuilder.tensorMap`).
 */
export function encodeTensorMapTiled(device: Device, options: TiledTensorMapOptions): Uint8Array {
  const c = checkTiledTensorMap(options);
  return loadAddon().tensorMapEncodeTiled(
    device.ordinal,
    c.dtype,
    c.rank,
    c.address,
    c.globalDims,
    c.globalStrides,
    c.boxDims,
    c.elementStrides,
    c.interleave,
    c.swizzle,
    c.l2Promotion,
    c.oobFill,
  );
}
