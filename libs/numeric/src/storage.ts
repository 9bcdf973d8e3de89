import { codecOf } from './conversion.ts';
import { resolveDType, type DType, type DTypeName } from './dtype.ts';
import { int64Format, integerBigIntValueOf } from './integer.ts';
import { resolveEncodeOptions, type EncodeOptions } from './rounding.ts';
import { ArgumentError } from './tilekitError.ts';

/**
 * The packed host representation of each dtype: what kernels read and write byte for byte.
 * fp32 holds values; fp16/bf16 hold 16-bit patterns; every fp8 holds 8-bit patterns; integers hold
 * values (two's complement in memory, i.e. the same bytes as their bit patterns).
 */
export interface StorageByDType {
  readonly fp32: Float32Array;
  readonly fp16: Uint16Array;
  readonly bf16: Uint16Array;
  readonly fp8e4m3fn: Uint8Array;
  readonly fp8e5m2: Uint8Array;
  readonly fp8e4m3fnuz: Uint8Array;
  readonly fp8e5m2fnuz: Uint8Array;
  readonly int8: Int8Array;
  readonly uint8: Uint8Array;
  readonly int32: Int32Array;
  readonly int64: BigInt64Array;
}

/** Any dtype's packed storage (see {@link StorageByDType}). */
export type Storage = Float32Array | Uint16Array | Uint8Array | Int8Array | Int32Array | BigInt64Array;

type StorageConstructor =
  | Float32ArrayConstructor
  | Uint16ArrayConstructor
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Int32ArrayConstructor
  | BigInt64ArrayConstructor;

const storageConstructors: Readonly<Record<DTypeName, StorageConstructor>> = Object.freeze({
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
});

/** What kind of element a dtype's storage holds. */
type Layout = 'float32' | 'bits' | 'integer' | 'int64';

function layoutOf(d: DType): Layout {
  if (d.name === 'fp32') return 'float32';
  if (d.name === 'int64') return 'int64';
  return d.kind === 'int' ? 'integer' : 'bits';
}

/** The typed-array class holding `dtype` (e.g. Uint16Array for fp16). */
export function storageConstructorOf(dtype: DType | DTypeName): StorageConstructor {
  return storageConstructors[resolveDType(dtype).name];
}

function checkLength(length: unknown): asserts length is number {
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
    throw new ArgumentError('length', 'must be a non-negative safe integer', length);
  }
}

function checkStorage(d: DType, storage: unknown): asserts storage is Storage {
  const expected = storageConstructors[d.name];
  if (!(storage instanceof expected)) {
    const found = (storage as { constructor?: { name?: string } } | null | undefined)?.constructor?.name ?? typeof storage;
    throw new ArgumentError('storage', `must be a ${expected.name} for ${d.name}`, found);
  }
}

function numberAt(values: ArrayLike<number>, i: number): number {
  const v = values[i];
  if (typeof v !== 'number') throw new ArgumentError(`values[${i}]`, 'must be a number', v);
  return v;
}

function checkIndex(storage: Storage, i: unknown): asserts i is number {
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= storage.length) {
    throw new ArgumentError('i', `must be an integer index in [0, ${storage.length})`, i);
  }
}

/**
 * A zero-filled storage of `length` elements for `dtype` (all-zero bytes are +0 in every dtype).
 * @throws ArgumentError for a negative or non-integer length.
 */
export function allocStorage<N extends DTypeName>(dtype: N | DType<N>, length: number): StorageByDType[N] {
  const d = resolveDType(dtype);
  checkLength(length);
  return new storageConstructors[d.name](length) as StorageByDType[N];
}

/**
 * `values` converted element by element (as {@link encode} / {@link setStorageElement} would) into
 * a new storage. Postcondition: `decodeArray(d, encodeArray(d, xs))[i] === roundTo(d, xs[i])`.
 */
export function encodeArray<N extends DTypeName>(
  dtype: N | DType<N>,
  values: ArrayLike<number>,
  options?: EncodeOptions,
): StorageByDType[N] {
  const d = resolveDType(dtype);
  const { saturate, rounding } = resolveEncodeOptions(d, options);
  const n = values.length;
  checkLength(n);
  const out = allocStorage(d, n) as Storage;
  switch (layoutOf(d)) {
    case 'float32': {
      const f32 = out as Float32Array;
      if (rounding === 'nearestEven' && !saturate) {
        for (let i = 0; i < n; i++) f32[i] = numberAt(values, i); // typed-array stores round to nearest even
      } else {
        const roundTo = codecOf(d).roundTo;
        for (let i = 0; i < n; i++) f32[i] = roundTo(numberAt(values, i), saturate, rounding);
      }
      break;
    }
    case 'bits': {
      const encode = codecOf(d).encode;
      for (let i = 0; i < n; i++) out[i] = encode(numberAt(values, i), saturate, rounding);
      break;
    }
    case 'integer': {
      const roundTo = codecOf(d).roundTo;
      for (let i = 0; i < n; i++) out[i] = roundTo(numberAt(values, i), saturate, rounding);
      break;
    }
    case 'int64': {
      const i64 = out as BigInt64Array;
      for (let i = 0; i < n; i++) i64[i] = integerBigIntValueOf(int64Format, numberAt(values, i), saturate, rounding);
      break;
    }
  }
  return out as StorageByDType[N];
}

/**
 * The exact values held by a storage, as float64 (int64 beyond ±2^53 rounds to the nearest double).
 * @throws ArgumentError when `storage` is not the typed array `dtype` uses.
 */
export function decodeArray(dtype: DType | DTypeName, storage: Storage): Float64Array {
  const d = resolveDType(dtype);
  checkStorage(d, storage);
  const n = storage.length;
  const out = new Float64Array(n);
  switch (layoutOf(d)) {
    case 'float32':
    case 'integer':
      out.set(storage as Exclude<Storage, BigInt64Array>);
      break;
    case 'bits': {
      const decode = codecOf(d).decode;
      const bits = storage as Uint8Array | Uint16Array;
      for (let i = 0; i < n; i++) out[i] = decode(bits[i]!);
      break;
    }
    case 'int64': {
      const i64 = storage as BigInt64Array;
      for (let i = 0; i < n; i++) out[i] = Number(i64[i]!);
      break;
    }
  }
  return out;
}

/**
 * The exact value of element `i` (int64: nearest double).
 * @throws ArgumentError for a storage of the wrong class or an index out of range.
 */
export function storageElement(dtype: DType | DTypeName, storage: Storage, i: number): number {
  const d = resolveDType(dtype);
  checkStorage(d, storage);
  checkIndex(storage, i);
  switch (layoutOf(d)) {
    case 'bits':
      return codecOf(d).decode(storage[i] as number);
    case 'int64':
      return Number(storage[i] as bigint);
    default:
      return storage[i] as number;
  }
}

/**
 * Stores `value` converted to `dtype` at element `i`; afterwards
 * `storageElement(d, s, i) === roundTo(d, value, options)` (int64: up to the final double rounding).
 * @throws ArgumentError for a storage of the wrong class, an index out of range or bad options.
 */
export function setStorageElement(dtype: DType | DTypeName, storage: Storage, i: number, value: number, options?: EncodeOptions): void {
  const d = resolveDType(dtype);
  checkStorage(d, storage);
  checkIndex(storage, i);
  if (typeof value !== 'number') throw new ArgumentError('value', 'must be a number', value);
  const { saturate, rounding } = resolveEncodeOptions(d, options);
  switch (layoutOf(d)) {
    case 'bits':
      storage[i] = codecOf(d).encode(value, saturate, rounding);
      return;
    case 'int64':
      storage[i] = integerBigIntValueOf(int64Format, value, saturate, rounding);
      return;
    default:
      storage[i] = codecOf(d).roundTo(value, saturate, rounding);
  }
}
