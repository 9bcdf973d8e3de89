import { cubinKernelParams } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import { loadAddon, type ModuleHandle } from './addon.ts';
import type { Device } from './device.ts';
import { DisposedError, track, untrack } from './disposal.ts';
import { Kernel } from './kernel.ts';
import type { KernelParamInfo } from './launch.ts';

/** What a module image holds, from its first bytes. */
export type ModuleImageKind = 'cubin' | 'fatbin' | 'ptx';

/**
 * Classifies an image: ELF magic → cubin, fatbin magic (0xBA55ED50, little-endian) → fatbin,
 * text starting (after comments and blank lines) with a PTX directive → ptx; anything else →
 * undefined. A damaged cubin still classifies as cubin; the driver then rejects it.
 */
export function moduleImageKind(image: Uint8Array): ModuleImageKind | undefined {
  if (image.length >= 4 && image[0] === 0x7f && image[1] === 0x45 && image[2] === 0x4c && image[3] === 0x46) {
    return 'cubin';
  }
  if (image.length >= 4 && image[0] === 0x50 && image[1] === 0xed && image[2] === 0x55 && image[3] === 0xba) {
    return 'fatbin';
  }
  const head = new TextDecoder('utf-8', { fatal: false }).decode(image.subarray(0, 4096));
  if (/^\s*(?:(?:\/\/[^\n]*|\/\*[\s\S]*?\*\/)\s*)*\.version\s+\d+\.\d+/.test(head)) return 'ptx';
  return undefined;
}

/**
 * A loaded module (cubin, fatbin or PTX) in a device's primary context. Kernels are looked up by
 * their exact (extern "C") name and cached. `dispose()` unloads the module; its kernels then
 * throw `DisposedError`.
 */
export class CudaModule {
  readonly device: Device;
  readonly kind: ModuleImageKind;
  #handle: ModuleHandle | undefined;
  readonly #kernels = new Map<string, Kernel>();
  /** The image, kept for cubins: their kernels' parameter layouts are read from it. */
  readonly #cubin: Uint8Array | undefined;

  private constructor(device: Device, handle: ModuleHandle, kind: ModuleImageKind, image: Uint8Array) {
    this.device = device;
    this.#handle = handle;
    this.kind = kind;
    this.#cubin = kind === 'cubin' ? image : undefined;
  }

  /**
   * The parameter layout of kernel `name` as the cubin records it (see `cubinKernelParams`);
   * undefined for a fatbin or PTX image, or when the cubin does not say.
   */
  imageParams(name: string): KernelParamInfo[] | undefined {
    return this.#cubin === undefined ? undefined : cubinKernelParams(this.#cubin, name);
  }

  /**
   * Loads `image`: bytes of a cubin / fatbin / PTX, or PTX text. Throws `ArgumentError` for bytes
   * that are none of these, and `CudaError` (with the loader's log) when the driver rejects it.
   */
  static load(device: Device, image: Uint8Array | string): CudaModule {
    let bytes: Uint8Array;
    if (typeof image === 'string') {
      bytes = new TextEncoder().encode(image);
    } else if (image instanceof Uint8Array) {
      bytes = image;
    } else {
      throw new ArgumentError('image', 'must be a Uint8Array (cubin, fatbin, PTX) or a PTX string', typeof image);
    }
    if (bytes.length === 0) throw new ArgumentError('image', 'must not be empty');
    const kind = moduleImageKind(bytes);
    if (kind === undefined) {
      throw new ArgumentError('image', 'is not a cubin (ELF), a fatbin or PTX text', `${bytes.length} bytes`);
    }
    if (kind === 'ptx' && bytes[bytes.length - 1] !== 0) {
      // PTX is read as a C string.
      const terminated = new Uint8Array(bytes.length + 1);
      terminated.set(bytes);
      bytes = terminated;
    }
    const handle = loadAddon().moduleLoad(device.ordinal, bytes);
    const module = new CudaModule(device, handle, kind, bytes);
    track(module, `CudaModule(device ${device.ordinal})`, () => loadAddon().moduleUnload(handle));
    return module;
  }

  get handle(): ModuleHandle {
    if (this.#handle === undefined) throw new DisposedError('CudaModule');
    return this.#handle;
  }

  get disposed(): boolean {
    return this.#handle === undefined;
  }

  /** The kernel named `name`; throws `CudaError` (CUDA_ERROR_NOT_FOUND) when there is none. */
  getKernel(name: string): Kernel {
    if (typeof name !== 'string' || name.length === 0) throw new ArgumentError('name', 'must be a non-empty string', name);
    const cached = this.#kernels.get(name);
    if (cached) return cached;
    const kernel = new Kernel(this, name, loadAddon().moduleGetFunction(this.handle, name));
    this.#kernels.set(name, kernel);
    return kernel;
  }

  /** Unloads the module. Idempotent. Queued launches of its kernels must be finished first. */
  dispose(): void {
    const handle = this.#handle;
    if (handle === undefined) return;
    this.#handle = undefined;
    this.#kernels.clear();
    untrack(this);
    loadAddon().moduleUnload(handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
