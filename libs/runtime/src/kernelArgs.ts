import { ArgumentError } from '@tilekit/numeric';

/**
 * Kernel parameters packed into one byte buffer: parameter `i` occupies
 * `bytes[offsets[i] .. offsets[i] + sizes[i])`. This is the launch ABI of `Kernel.launch`; the
 * codegen package produces the same shape from a kernel's declared parameter list.
 */
export interface PackedKernelArgs {
  readonly bytes: Uint8Array;
  readonly offsets: readonly number[];
  readonly sizes: readonly number[];
}

/** Anything with a device address (a DeviceBuffer, a view). */
export interface HasDevicePointer {
  readonly ptr: bigint;
}

/**
 * Packs scalar, pointer and opaque (e.g. 128-byte CUtensorMap) parameters in declaration order,
 * each at its natural alignment, the way the C++ ABI lays out a parameter struct. Postcondition
 * (tested): every offset is a multiple of its alignment, parameters do not overlap, and reading
 * the bytes back yields the values written.
 */
export class KernelArgsBuilder {
  #bytes = new Uint8Array(256);
  #length = 0;
  readonly #offsets: number[] = [];
  readonly #sizes: number[] = [];

  /** A 64-bit device pointer (`T*`). */
  pointer(value: bigint | HasDevicePointer): this {
    const ptr = typeof value === 'bigint' ? value : value.ptr;
    if (typeof ptr !== 'bigint' || ptr < 0n || ptr >= 1n << 64n) {
      throw new ArgumentError(`param ${this.#offsets.length}`, 'pointer must be a bigint in [0, 2^64)', ptr);
    }
    return this.#put(8, 8, (view, at) => view.setBigUint64(at, ptr, true));
  }

  i32(value: number): this {
    this.#checkInt(value, -(2 ** 31), 2 ** 31 - 1);
    return this.#put(4, 4, (view, at) => view.setInt32(at, value, true));
  }

  u32(value: number): this {
    this.#checkInt(value, 0, 2 ** 32 - 1);
    return this.#put(4, 4, (view, at) => view.setUint32(at, value, true));
  }

  i64(value: bigint | number): this {
    const v = BigInt(value);
    if (v < -(1n << 63n) || v >= 1n << 63n) throw new ArgumentError(`param ${this.#offsets.length}`, 'must fit in int64', v);
    return this.#put(8, 8, (view, at) => view.setBigInt64(at, v, true));
  }

  u64(value: bigint | number): this {
    const v = BigInt(value);
    if (v < 0n || v >= 1n << 64n) throw new ArgumentError(`param ${this.#offsets.length}`, 'must fit in uint64', v);
    return this.#put(8, 8, (view, at) => view.setBigUint64(at, v, true));
  }

  f32(value: number): this {
    return this.#put(4, 4, (view, at) => view.setFloat32(at, value, true));
  }

  f64(value: number): this {
    return this.#put(8, 8, (view, at) => view.setFloat64(at, value, true));
  }

  /** Raw bytes (a struct passed by value) at `alignment` (a power of two). */
  raw(bytes: Uint8Array, alignment: number): this {
    if (!Number.isInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0) {
      throw new ArgumentError('alignment', 'must be a power of two', alignment);
    }
    if (bytes.length === 0) throw new ArgumentError(`param ${this.#offsets.length}`, 'must not be empty');
    return this.#put(bytes.length, alignment, (view, at) => {
      new Uint8Array(view.buffer, view.byteOffset + at, bytes.length).set(bytes);
    });
  }

  /** A `const __grid_constant__ CUtensorMap` (128 bytes, 64-byte aligned). */
  tensorMap(map: Uint8Array): this {
    if (map.length !== 128) throw new ArgumentError(`param ${this.#offsets.length}`, 'a CUtensorMap is 128 bytes', map.length);
    return this.raw(map, 64);
  }

  /** The packed parameters (a copy; the builder may continue). */
  build(): PackedKernelArgs {
    return { bytes: this.#bytes.slice(0, this.#length), offsets: [...this.#offsets], sizes: [...this.#sizes] };
  }

  #checkInt(value: number, min: number, max: number): void {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ArgumentError(`param ${this.#offsets.length}`, `must be an integer in [${min}, ${max}]`, value);
    }
  }

  #put(size: number, alignment: number, write: (view: DataView, at: number) => void): this {
    const at = Math.ceil(this.#length / alignment) * alignment;
    const end = at + size;
    if (end > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(end, this.#bytes.length * 2));
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    write(new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength), at);
    this.#offsets.push(at);
    this.#sizes.push(size);
    this.#length = end;
    return this;
  }
}

/** Convenience: `kernelArgs(b => b.pointer(x).u32(n))`. */
export function kernelArgs(fill: (builder: KernelArgsBuilder) => unknown): PackedKernelArgs {
  const builder = new KernelArgsBuilder();
  fill(builder);
  return builder.build();
}
