// Device buffers a spec (or an example) allocates or uploads for one problem and frees together afterwards (the
// empty-rows specs of the attention runners with the fake addon; the DSA GPU specs and example on a device).
import type { Device, DeviceBuffer } from '../index.ts';

/** The smallest allocation: a 0-row tensor still has a (never read) 16-byte-aligned address. */
export const MIN_OWNED_BYTES = 64;

/** Buffers allocated or uploaded on one device, all freed by `dispose`. */
export class OwnedBuffers {
  readonly #device: Device;
  readonly #owned: DeviceBuffer[] = [];

  constructor(device: Device) {
    this.#device = device;
  }

  /** A fresh buffer of at least `MIN_OWNED_BYTES` (and at least `bytes`), every byte set to `options.fill` when given. */
  alloc(bytes: number, options: { readonly fill?: number } = {}): DeviceBuffer {
    const b = this.#own(this.#device.alloc(Math.max(MIN_OWNED_BYTES, bytes)));
    return options.fill === undefined ? b : b.fill(options.fill);
  }

  /** `view`'s bytes uploaded to a new buffer. */
  upload(view: ArrayBufferView): DeviceBuffer {
    return this.#own(this.#device.upload(view));
  }

  /** `xs` uploaded as int32 (sequence starts). */
  int32(xs: readonly number[]): DeviceBuffer {
    return this.#own(this.#device.upload(new Int32Array(xs)));
  }

  /** Frees every buffer allocated so far (the caller synchronizes first when kernels may still use them). */
  dispose(): void {
    this.#owned.forEach((b) => b.dispose());
  }

  #own(b: DeviceBuffer): DeviceBuffer {
    this.#owned.push(b);
    return b;
  }
}
