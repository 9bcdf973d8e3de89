import {
  ArgumentError,
  type DType,
  type DTypeName,
  type EncodeOptions,
  type Storage,
  TilekitError,
  allocStorage,
  decodeArray,
  resolveDType,
  setStorageElement,
  storageConstructorOf,
  storageElement,
} from '@tilekit/numeric';
import { checkIndex, checkPermutation, checkShape, formatShape, rowMajorStrides, shapeSize } from './shape.ts';

/** Options of HostTensor.empty / fromValues: explicit element strides (default packed row-major). */
export interface HostTensorOptions {
  strides?: readonly number[];
}

/** Options of HostTensor.fromStorage: wraps existing storage with optional strides and offset. */
export interface FromStorageOptions extends HostTensorOptions {
  offset?: number;
}

/** A view that needs contiguous elements (view/reshape) was asked of a strided tensor. */
export class NonContiguousError extends TilekitError {
  constructor(method: string, shape: readonly number[], strides: readonly number[]) {
    super(
      'host/non-contiguous',
      `${method}: the tensor (shape ${formatShape(shape)}, strides ${formatShape(strides)}) is not contiguous; call contiguous() first`,
    );
  }
}

type Indexable = { [i: number]: number | bigint };

/**
 * The storage as integers of the same width: copying fp32 elements through JS numbers may quiet
 * NaN payloads, copying their bits never does.
 */
function bitsView(storage: Storage): Indexable {
  if (storage instanceof Float32Array) return new Uint32Array(storage.buffer, storage.byteOffset, storage.length);
  return storage as unknown as Indexable;
}

/**
 * A tensor in host memory, CK-tile's `HostTensor`: a dtype, a shape, element strides and an
 * element offset into packed storage (numeric's Storage: fp16/bf16 as Uint16Array, fp8 as
 * Uint8Array, …), so the bytes are exactly what a kernel reads. Views (permute, transpose,
 * slice, view/reshape) share the storage; `contiguous()` copies.
 *
 * Element (i0, …, ik) lives at storage[offset + Σ ij·strides[j]]. Strides are non-negative
 * element counts (0 broadcasts). Values go in through the dtype's rounding (`set`) and come out
 * as numbers (`get`). Logical order is row-major (last axis fastest) for `at`, `fromValues`,
 * `toFloat64Array` and fills.
 *
 * Postconditions (property-tested): permuting by axes then by their inverse gives the original
 * shape, strides and values; reading through any view equals reading the base at the mapped
 * index; `contiguous()` preserves every logical value (bit-exactly) and is contiguous.
 */
export class HostTensor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly storage: Storage;
  /** Number of elements (1 for rank 0). */
  readonly size: number;

  private constructor(dtype: DType, shape: readonly number[], strides: readonly number[], offset: number, storage: Storage) {
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.strides = Object.freeze([...strides]);
    this.offset = offset;
    this.storage = storage;
    this.size = shapeSize(shape);
  }

  /** A zero-filled tensor with fresh storage sized for `strides` (default packed row-major). */
  static empty(dtype: DType | DTypeName, shape: readonly number[], options: HostTensorOptions = {}): HostTensor {
    const type = resolveDType(dtype);
    const checked = checkShape(shape, 'HostTensor.empty');
    const strides = checkStrides(options.strides ?? rowMajorStrides(checked), checked, 'HostTensor.empty');
    return new HostTensor(type, checked, strides, 0, allocStorage(type, spanOf(checked, strides)));
  }

  /** Same as `empty` (storage is allocated zeroed; bits 0 decode as +0 for every dtype). */
  static zeros(dtype: DType | DTypeName, shape: readonly number[], options: HostTensorOptions = {}): HostTensor {
    return HostTensor.empty(dtype, shape, options);
  }

  /** A tensor whose every element is `value` rounded to the dtype. */
  static full(dtype: DType | DTypeName, shape: readonly number[], value: number, options: EncodeOptions = {}): HostTensor {
    const t = HostTensor.empty(dtype, shape);
    for (let i = 0; i < t.size; i++) setStorageElement(t.dtype, t.storage, i, value, options);
    return t;
  }

  /**
   * A tensor holding `values` (row-major logical order, one per element) rounded to the dtype;
   * with explicit `strides` the values still fill the logical order.
   */
  static fromValues(
    dtype: DType | DTypeName,
    shape: readonly number[],
    values: ArrayLike<number>,
    options: HostTensorOptions & EncodeOptions = {},
  ): HostTensor {
    const t = HostTensor.empty(dtype, shape, options.strides === undefined ? {} : { strides: options.strides });
    if (values.length !== t.size) {
      throw new ArgumentError(
        'HostTensor.fromValues',
        `values must have ${t.size} entries for shape ${formatShape(t.shape)}`,
        values.length,
      );
    }
    t.forEachOffset((off, flat) => setStorageElement(t.dtype, t.storage, off, values[flat]!, options));
    return t;
  }

  /**
   * Wraps existing storage (e.g. bytes read back from a device) without copying. The storage
   * must be the dtype's Storage kind and long enough for shape, strides and offset.
   */
  static fromStorage(dtype: DType | DTypeName, shape: readonly number[], storage: Storage, options: FromStorageOptions = {}): HostTensor {
    const type = resolveDType(dtype);
    const checked = checkShape(shape, 'HostTensor.fromStorage');
    const strides = checkStrides(options.strides ?? rowMajorStrides(checked), checked, 'HostTensor.fromStorage');
    const offset = options.offset ?? 0;
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new ArgumentError('HostTensor.fromStorage', 'offset must be a non-negative integer', offset);
    }
    const expected = storageConstructorOf(type);
    if (!(storage instanceof expected)) {
      throw new ArgumentError('HostTensor.fromStorage', `storage must be a ${expected.name} for ${type.name}`, storage?.constructor?.name);
    }
    const span = spanOf(checked, strides);
    if (span > 0 && offset + span > storage.length) {
      throw new ArgumentError(
        'HostTensor.fromStorage',
        `storage must hold at least offset + ${span} = ${offset + span} elements`,
        storage.length,
      );
    }
    return new HostTensor(type, checked, strides, offset, storage);
  }

  /** Number of axes. */
  get rank(): number {
    return this.shape.length;
  }

  /**
   * Whether the elements are packed row-major from `offset` (axes of length 1 may have any
   * stride); such a tensor can be re-viewed with any shape of the same size.
   */
  get isContiguous(): boolean {
    if (this.size === 0) return true;
    let step = 1;
    for (let axis = this.rank - 1; axis >= 0; axis--) {
      const length = this.shape[axis]!;
      if (length !== 1 && this.strides[axis] !== step) return false;
      step *= length;
    }
    return true;
  }

  /** Bytes of storage the tensor spans from its offset: the length of `bytes()`. */
  get byteLength(): number {
    return spanOf(this.shape, this.strides) * this.storage.BYTES_PER_ELEMENT;
  }

  /**
   * A Uint8Array view (no copy) of the storage the tensor spans, starting at its offset: what to
   * upload to a device buffer. For a contiguous tensor it is exactly `size · dtype.bytes` bytes in
   * row-major order; for a strided view, the kernel must use the same strides.
   */
  bytes(): Uint8Array {
    const bpe = this.storage.BYTES_PER_ELEMENT;
    return new Uint8Array(this.storage.buffer, this.storage.byteOffset + this.offset * bpe, this.byteLength);
  }

  /** Storage position of a multi-index (checked: rank and bounds). */
  offsetOf(index: readonly number[]): number {
    checkIndex(index, this.shape, 'HostTensor.offsetOf');
    return this.unchecked(index);
  }

  /** The element at `index`, decoded to a number. */
  get(index: readonly number[]): number {
    checkIndex(index, this.shape, 'HostTensor.get');
    return storageElement(this.dtype, this.storage, this.unchecked(index));
  }

  /** Stores `value` rounded through the dtype at `index` (views write through to the base). */
  set(index: readonly number[], value: number, options: EncodeOptions = {}): void {
    checkIndex(index, this.shape, 'HostTensor.set');
    setStorageElement(this.dtype, this.storage, this.unchecked(index), value, options);
  }

  /** The element at row-major position `flat` of the logical shape. */
  at(flat: number): number {
    return storageElement(this.dtype, this.storage, this.flatOffset(flat, 'HostTensor.at'));
  }

  /** Stores `value` at row-major position `flat`, rounded through the dtype. */
  setAt(flat: number, value: number, options: EncodeOptions = {}): void {
    setStorageElement(this.dtype, this.storage, this.flatOffset(flat, 'HostTensor.setAt'), value, options);
  }

  /**
   * Calls `fn(storageOffset, flat)` for every element in row-major logical order: the cheap way
   * to walk a strided tensor (fills, checks, references) without building indices.
   */
  forEachOffset(fn: (storageOffset: number, flat: number) => void): void {
    const size = this.size;
    if (size === 0) return;
    const { rank, shape, strides } = this;
    const index = new Array<number>(rank).fill(0);
    let off = this.offset;
    for (let flat = 0; flat < size; flat++) {
      fn(off, flat);
      for (let axis = rank - 1; axis >= 0; axis--) {
        const stride = strides[axis]!;
        off += stride;
        if (++index[axis]! < shape[axis]!) break;
        off -= stride * shape[axis]!;
        index[axis] = 0;
      }
    }
  }

  /** View with axes reordered: result axis i is this tensor's axis `axes[i]`. */
  permute(axes: readonly number[]): HostTensor {
    checkPermutation(axes, this.rank, 'permute');
    return this.withLayout(
      axes.map((a) => this.shape[a]!),
      axes.map((a) => this.strides[a]!),
      this.offset,
    );
  }

  /** View with axes `a` and `b` swapped. */
  transpose(a: number, b: number): HostTensor {
    this.checkAxis(a, 'transpose', 'a');
    this.checkAxis(b, 'transpose', 'b');
    const axes = this.shape.map((_, i) => (i === a ? b : i === b ? a : i));
    return this.permute(axes);
  }

  /** View of positions [start, end) along `axis` (half-open; end defaults to the axis length). */
  slice(axis: number, start: number, end: number = this.shape[axis] ?? 0): HostTensor {
    this.checkAxis(axis, 'slice', 'axis');
    const length = this.shape[axis]!;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || start > end || end > length) {
      throw new ArgumentError('slice', `start and end must be integers with 0 <= start <= end <= ${length} on axis ${axis}`, [start, end]);
    }
    const shape = [...this.shape];
    shape[axis] = end - start;
    return this.withLayout(shape, this.strides, this.offset + start * this.strides[axis]!);
  }

  /**
   * View with a new shape of the same size (one entry may be −1: inferred), packed row-major over
   * the same storage; only for contiguous tensors (NonContiguousError otherwise).
   */
  view(shape: readonly number[]): HostTensor {
    return this.reshapeAs(shape, 'view');
  }

  /** Same as `view`: never copies; a strided tensor must be made `contiguous()` first. */
  reshape(shape: readonly number[]): HostTensor {
    return this.reshapeAs(shape, 'reshape');
  }

  /** A packed row-major copy with fresh storage (bit-exact: NaN payloads and −0 survive). */
  contiguous(): HostTensor {
    const out = HostTensor.empty(this.dtype, this.shape);
    const src = bitsView(this.storage);
    const dst = bitsView(out.storage);
    this.forEachOffset((off, flat) => (dst[flat] = src[off]!));
    return out;
  }

  /** All elements decoded, in row-major logical order. */
  toFloat64Array(): Float64Array {
    if (this.isContiguous && spanOf(this.shape, this.strides) === this.size) {
      return decodeArray(this.dtype, this.storage.subarray(this.offset, this.offset + this.size) as Storage);
    }
    const out = new Float64Array(this.size);
    this.forEachOffset((off, flat) => (out[flat] = storageElement(this.dtype, this.storage, off)));
    return out;
  }

  /** `HostTensor(fp16, shape [2,3], strides [3,1], offset 0)`. */
  toString(): string {
    return `HostTensor(${this.dtype.name}, shape ${formatShape(this.shape)}, strides ${formatShape(this.strides)}, offset ${this.offset})`;
  }

  private reshapeAs(shape: readonly number[], method: string): HostTensor {
    const resolved = inferShape(shape, this.size, method);
    if (!this.isContiguous) throw new NonContiguousError(method, this.shape, this.strides);
    return this.withLayout(resolved, rowMajorStrides(resolved), this.offset);
  }

  private withLayout(shape: readonly number[], strides: readonly number[], offset: number): HostTensor {
    return new HostTensor(this.dtype, shape, strides, offset, this.storage);
  }

  private unchecked(index: readonly number[]): number {
    let off = this.offset;
    for (let axis = 0; axis < index.length; axis++) off += index[axis]! * this.strides[axis]!;
    return off;
  }

  private flatOffset(flat: number, method: string): number {
    const size = this.size;
    if (!Number.isInteger(flat) || flat < 0 || flat >= size) {
      throw new ArgumentError(method, `flat index must be an integer in [0, ${size}) for shape ${formatShape(this.shape)}`, flat);
    }
    let off = this.offset;
    let rest = flat;
    for (let axis = this.rank - 1; axis >= 0; axis--) {
      const length = this.shape[axis]!;
      off += (rest % length) * this.strides[axis]!;
      rest = Math.floor(rest / length);
    }
    return off;
  }

  private checkAxis(axis: number, method: string, name: string): void {
    if (!Number.isInteger(axis) || axis < 0 || axis >= this.rank) {
      throw new ArgumentError(method, `${name} must be an axis in [0, ${this.rank})`, axis);
    }
  }
}

function checkStrides(strides: readonly number[], shape: readonly number[], method: string): readonly number[] {
  if (!Array.isArray(strides) || strides.length !== shape.length || strides.some((s) => !Number.isSafeInteger(s) || s < 0)) {
    throw new ArgumentError(
      method,
      `strides must be ${shape.length} non-negative integers, one per axis of ${formatShape(shape)}`,
      strides,
    );
  }
  if (!Number.isSafeInteger(spanOf(shape, strides)))
    throw new ArgumentError(method, 'strides must span at most 2^53 - 1 elements', strides);
  return strides;
}

/** Storage elements a layout reaches from its offset: 1 + Σ (n − 1)·stride, 0 when empty. */
function spanOf(shape: readonly number[], strides: readonly number[]): number {
  if (shapeSize(shape) === 0) return 0;
  let span = 1;
  for (let axis = 0; axis < shape.length; axis++) span += (shape[axis]! - 1) * strides[axis]!;
  return span;
}

function inferShape(shape: readonly number[], size: number, method: string): number[] {
  const holes = Array.isArray(shape) ? shape.filter((n) => n === -1).length : 0;
  const known = Array.isArray(shape) ? shape.filter((n) => n !== -1) : shape;
  if (holes > 1) throw new ArgumentError(method, 'shape may contain at most one -1', shape);
  checkShape(known, method);
  const knownSize = shapeSize(known);
  if (holes === 1) {
    if (knownSize === 0 || size % knownSize !== 0) {
      throw new ArgumentError(method, `shape with -1 must divide the ${size} elements`, shape);
    }
    return shape.map((n) => (n === -1 ? size / knownSize : n));
  }
  if (knownSize !== size) throw new ArgumentError(method, `shape must have ${size} elements`, shape);
  return [...shape];
}
