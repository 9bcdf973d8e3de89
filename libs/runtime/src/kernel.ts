import { ArgumentError } from '@tilekit/numeric';
import { loadAddon, type FunctionHandle } from './addon.ts';
import type { CudaModule } from './cudaModule.ts';
import { DisposedError } from './disposal.ts';
import type { PackedKernelArgs } from './kernelArgs.ts';
import { recordLaunch } from './launchJournal.ts';
import { checkKernelArgs, checkLaunch, type KernelParamInfo, type LaunchConfig, type LaunchLimits } from './launch.ts';

/** Per-kernel facts from the driver (`cuFuncGetAttribute`). */
export interface KernelAttributes {
  readonly numRegs: number;
  readonly staticSharedBytes: number;
  /** Current opt-in ceiling for dynamic shared memory (48 KiB until raised). */
  readonly maxDynamicSharedBytes: number;
  /** Most threads per block this kernel can be launched with (registers, launch bounds). */
  readonly maxThreadsPerBlock: number;
  /** Local memory per thread: spills and stack arrays. */
  readonly localBytes: number;
  readonly constBytes: number;
  readonly ptxVersion: number;
  readonly binaryVersion: number;
}

// CUfunction_attribute values.
const MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

/**
 * A `__global__` function of a loaded module. `launch` validates the configuration and the
 * packed arguments in TS (throwing `ArgumentError`) and then enqueues through
 * `cuLaunchKernelEx`. Arguments reach the driver as `kernelParams`: one pointer per parameter
 * into the packed buffer; the driver copies the values before `launch` returns, so the buffer
 * may be reused at once.
 */
export class Kernel {
  readonly module: CudaModule;
  readonly name: string;
  readonly #handle: FunctionHandle;
  #params: readonly KernelParamInfo[] | null | undefined;
  // Launch limits change only through setMaxDynamicSharedMemory, so one query serves every launch.
  #limits: LaunchLimits | undefined;

  /** @internal Use `CudaModule.getKernel`. */
  constructor(module: CudaModule, name: string, handle: FunctionHandle) {
    this.module = module;
    this.name = name;
    this.#handle = handle;
  }

  get handle(): FunctionHandle {
    if (this.module.disposed) throw new DisposedError(`Kernel ${this.name} (module unloaded)`);
    return this.#handle;
  }

  /** The attributes now (maxDynamicSharedBytes changes with setMaxDynamicSharedMemory). */
  get attributes(): KernelAttributes {
    return loadAddon().funcGetAttributes(this.handle);
  }

  /**
   * The kernel's parameters (offset and size in the parameter block), else undefined. A cubin
   * records them (read without asking the driver); for a fatbin or PTX image the driver is asked
   * (CUDA 12.4+, `cuFuncGetParamInfo` until it reports the index past the last parameter, which
   * compute-sanitizer lists as an API error). Launch arguments are checked against them.
   */
  get params(): readonly KernelParamInfo[] | undefined {
    if (this.#params === undefined) this.#params = this.module.imageParams(this.name) ?? loadAddon().funcGetParamInfo(this.handle);
    return this.#params ?? undefined;
  }

  /**
   * Lets launches use up to `bytes` of dynamic shared memory. Throws `ArgumentError` when
   * static + dynamic shared memory would exceed the device's opt-in maximum per block.
   */
  setMaxDynamicSharedMemory(bytes: number): void {
    const device = this.module.device;
    const staticBytes = this.attributes.staticSharedBytes;
    const limit = device.sharedMemoryPerBlockOptin - staticBytes;
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > limit) {
      throw new ArgumentError(
        'bytes',
        `must be an integer in [0, ${limit}] (device opt-in ${device.sharedMemoryPerBlockOptin} minus ${staticBytes} static)`,
        bytes,
      );
    }
    loadAddon().funcSetAttribute(this.handle, MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    this.#limits = undefined;
  }

  /** Validates and enqueues one launch. */
  launch(config: LaunchConfig, args: PackedKernelArgs): void {
    const device = this.module.device;
    const checked = checkLaunch(config, this.#launchLimits());
    checkKernelArgs(this.name, args, this.params);
    const stream = config.stream;
    if (stream !== undefined && stream.device !== device) {
      throw new ArgumentError('stream', `must belong to device ${device.ordinal}`, stream.device.ordinal);
    }
    loadAddon().launchKernel(
      this.handle,
      checked.grid,
      checked.block,
      checked.sharedBytes,
      stream?.handle,
      checked.cluster,
      args.bytes,
      args.offsets,
    );
    recordLaunch(this.name, stream);
  }

  #launchLimits(): LaunchLimits {
    if (this.#limits === undefined) {
      const device = this.module.device;
      const attributes = this.attributes;
      this.#limits = {
        kernel: this.name,
        maxGridDim: device.maxGridDim,
        maxBlockDim: device.maxBlockDim,
        maxThreadsPerBlock: Math.min(device.maxThreadsPerBlock, attributes.maxThreadsPerBlock),
        maxDynamicSharedBytes: attributes.maxDynamicSharedBytes,
        clusterLaunch: device.clusterLaunch,
        maxClusterBlocks: 8,
      };
    }
    return this.#limits;
  }
}
