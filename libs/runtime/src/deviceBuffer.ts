import { ArgumentError } from '@tilekit/numeric';
import { loadAddon } from './addon.ts';
import { bytesOf, requireByteCount, requireIntegerIn, requireRange, type HostBytes } from './argumentChecks.ts';
import { CudaError, DeviceOutOfMemoryError } from './cudaError.ts';
import type { Device } from './device.ts';
import { DisposedError, track, untrack } from './disposal.ts';
import type { Stream } from './stream.ts';

/** Options shared by copies: an optional stream (default: the legacy default stream). */
export interface CopyOptions {
  readonly stream?: Stream;
}

// One allocation, shared by the buffer that made it and every view of it. The safety net tracks
// this object, not a buffer, so the memory lives as long as any view does.
interface Allocation {
  readonly ordinal: number;
  readonly ptr: bigint;
  readonly bytes: number;
  freed: boolean;
}

/**
 * A range of device memory: either a whole allocation (`alloc`) or a `view` into one. `ptr` is
 * the device address as a bigint. Copies, fills and views validate offsets and sizes first and
 * throw `ArgumentError` for a range outside the buffer; any use after the allocation was disposed
 * throws `DisposedError`. `dispose()` on the owning buffer frees the memory (views then become
 * unusable); `dispose()` on a view only retires the view. A FinalizationRegistry frees memory
 * that became garbage without `dispose()`.
 */
export class DeviceBuffer {
  readonly device: Device;
  /** Size of this buffer (or view) in bytes. */
  readonly bytes: number;
  /** Offset of this view inside its allocation (0 for an owning buffer). */
  readonly byteOffset: number;
  readonly #allocation: Allocation;
  readonly #owner: boolean;
  #retired = false;

  private constructor(device: Device, allocation: Allocation, byteOffset: number, bytes: number, owner: boolean) {
    this.device = device;
    this.#allocation = allocation;
    this.byteOffset = byteOffset;
    this.bytes = bytes;
    this.#owner = owner;
  }

  /** Allocates `bytes` on `device` (`cuMemAlloc`); 0 bytes gives an empty buffer at address 0. */
  static alloc(device: Device, bytes: number, label?: string): DeviceBuffer {
    requireByteCount('bytes', bytes);
    const ordinal = device.ordinal;
    const ptr = bytes === 0 ? 0n : allocOrExplain(device, bytes, label);
    const allocation: Allocation = { ordinal, ptr, bytes, freed: false };
    if (bytes > 0) {
      track(allocation, `DeviceBuffer(${bytes} bytes on device ${ordinal})`, () => loadAddon().memFree(ordinal, ptr));
    }
    return new DeviceBuffer(device, allocation, 0, bytes, true);
  }

  /** The device address of the first byte. Throws `DisposedError` after dispose. */
  get ptr(): bigint {
    this.#checkLive();
    return this.#allocation.ptr + BigInt(this.byteOffset);
  }

  /** True once this buffer or its allocation was disposed. */
  get disposed(): boolean {
    return this.#retired || this.#allocation.freed;
  }

  /** True for buffers made by `view`. */
  get isView(): boolean {
    return !this.#owner;
  }

  /**
   * Copies all of `src` into this buffer at `offset` (default 0). Throws `ArgumentError` when
   * `offset + src.byteLength` exceeds the buffer.
   */
  copyFromHost(src: HostBytes, options: CopyOptions & { readonly offset?: number } = {}): this {
    const bytes = bytesOf('src', src);
    const offset = requireByteCount('offset', options.offset ?? 0);
    requireRange('src', offset, bytes.byteLength, this.bytes);
    if (bytes.byteLength === 0) return this;
    loadAddon().memcpyHtoD(this.device.ordinal, this.ptr + BigInt(offset), bytes, this.#stream(options.stream));
    return this;
  }

  /**
   * Copies device bytes to the host. Without `dst`, returns a new Uint8Array of the whole buffer;
   * with `dst`, fills all of it from `offset` and returns it. Returns only once the bytes are there.
   */
  copyToHost(): Uint8Array;
  copyToHost<T extends HostBytes>(dst: T, options?: CopyOptions & { readonly offset?: number }): T;
  copyToHost(dst?: HostBytes, options: CopyOptions & { readonly offset?: number } = {}): HostBytes {
    const target = dst ?? new Uint8Array(this.bytes);
    const bytes = bytesOf('dst', target);
    const offset = requireByteCount('offset', options.offset ?? 0);
    requireRange('dst', offset, bytes.byteLength, this.bytes);
    if (bytes.byteLength === 0) return target;
    loadAddon().memcpyDtoH(this.device.ordinal, bytes, this.ptr + BigInt(offset), this.#stream(options.stream));
    return target;
  }

  /**
   * Copies `bytes` (default: all of `src` from `srcOffset`) from another buffer of the same
   * device into this one at `dstOffset`. Overlapping ranges of one allocation are not allowed.
   */
  copyFrom(
    src: DeviceBuffer,
    options: CopyOptions & { readonly srcOffset?: number; readonly dstOffset?: number; readonly bytes?: number } = {},
  ): this {
    if (!(src instanceof DeviceBuffer)) throw new ArgumentError('src', 'must be a DeviceBuffer', typeof src);
    if (src.device !== this.device) {
      throw new ArgumentError('src', `must live on device ${this.device.ordinal}`, src.device.ordinal);
    }
    const srcOffset = requireByteCount('srcOffset', options.srcOffset ?? 0);
    const dstOffset = requireByteCount('dstOffset', options.dstOffset ?? 0);
    requireRange('srcOffset', srcOffset, 0, src.bytes);
    const bytes = requireByteCount('bytes', options.bytes ?? src.bytes - srcOffset);
    requireRange('bytes (source)', srcOffset, bytes, src.bytes);
    requireRange('bytes (destination)', dstOffset, bytes, this.bytes);
    if (bytes === 0) return this;
    const from = src.ptr + BigInt(srcOffset);
    const to = this.ptr + BigInt(dstOffset);
    const size = BigInt(bytes);
    if (src.#allocation === this.#allocation && from < to + size && to < from + size && from !== to) {
      throw new ArgumentError('src', 'must not overlap the destination range', { srcOffset, dstOffset, bytes });
    }
    if (from === to) return this;
    loadAddon().memcpyDtoD(this.device.ordinal, to, from, bytes, this.#stream(options.stream));
    return this;
  }

  /** Sets `bytes` bytes (default: to the end) from `offset` to `value` (0..255) (`cuMemsetD8`). */
  fill(value: number, options: CopyOptions & { readonly offset?: number; readonly bytes?: number } = {}): this {
    requireIntegerIn('value', value, 0, 255);
    const offset = requireByteCount('offset', options.offset ?? 0);
    requireRange('offset', offset, 0, this.bytes);
    const bytes = requireByteCount('bytes', options.bytes ?? this.bytes - offset);
    requireRange('bytes', offset, bytes, this.bytes);
    if (bytes === 0) return this;
    loadAddon().memsetD8(this.device.ordinal, this.ptr + BigInt(offset), value, bytes, this.#stream(options.stream));
    return this;
  }

  /**
   * A buffer over `[byteOffset, byteOffset + bytes)` of this one, sharing its memory (no copy).
   * `ptr` of the view is `this.ptr + byteOffset`. Default `bytes`: to the end.
   */
  view(byteOffset: number, bytes?: number): DeviceBuffer {
    this.#checkLive();
    requireByteCount('byteOffset', byteOffset);
    requireRange('byteOffset', byteOffset, 0, this.bytes);
    const size = requireByteCount('bytes', bytes ?? this.bytes - byteOffset);
    requireRange('bytes', byteOffset, size, this.bytes);
    return new DeviceBuffer(this.device, this.#allocation, this.byteOffset + byteOffset, size, false);
  }

  /**
   * Frees the allocation (owning buffer) or retires the view. Idempotent. Frees immediately, so
   * the caller must make sure no queued kernel still uses the memory (synchronize first).
   */
  dispose(): void {
    if (this.#retired) return;
    this.#retired = true;
    if (!this.#owner || this.#allocation.freed) return;
    this.#allocation.freed = true;
    untrack(this.#allocation);
    if (this.#allocation.bytes > 0) loadAddon().memFree(this.#allocation.ordinal, this.#allocation.ptr);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  toString(): string {
    return `DeviceBuffer(${this.bytes} bytes${this.isView ? ` at +${this.byteOffset}` : ''} on device ${this.device.ordinal})`;
  }

  #checkLive(): void {
    if (this.#retired || this.#allocation.freed) throw new DisposedError(this.toString());
  }

  #stream(stream: Stream | undefined) {
    if (stream === undefined) return undefined;
    if (stream.device !== this.device) {
      throw new ArgumentError('stream', `must belong to device ${this.device.ordinal}`, stream.device.ordinal);
    }
    return stream.handle;
  }
}

/** cuMemAlloc, with an out-of-memory failure turned into a `DeviceOutOfMemoryError` naming the allocation. */
function allocOrExplain(device: Device, bytes: number, label: string | undefined): bigint {
  try {
    return loadAddon().memAlloc(device.ordinal, bytes);
  } catch (error) {
    if (!(error instanceof CudaError) || error.cudaName !== 'CUDA_ERROR_OUT_OF_MEMORY') throw error;
    let free: number | undefined;
    try {
      free = device.memoryInfo().free;
    } catch {
      free = undefined;
    }
    throw new DeviceOutOfMemoryError(error, bytes, label, free);
  }
}
