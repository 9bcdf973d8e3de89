import { ArgumentError } from '@tilekit/numeric';
import { loadAddon, onAddonReset, type NativeDeviceInfo } from './addon.ts';
import { archForComputeCapability, type ComputeCapability, type CudaArch } from './arch.ts';
import { requireIntegerIn } from './argumentChecks.ts';
import { CudaUnavailableError } from './cudaError.ts';
import { launchesSettled } from './launchJournal.ts';
import { CudaEvent, type CudaEventOptions } from './cudaEvent.ts';
import { CudaModule } from './cudaModule.ts';
import { DeviceBuffer } from './deviceBuffer.ts';
import { probe } from './probe.ts';
import { Stream, type StreamOptions } from './stream.ts';

/** x, y, z. */
export type Dim3Tuple = readonly [number, number, number];

/**
 * One CUDA device and its primary context. Opening a device retains the primary context for the
 * life of the process; every native call made through it first makes that context current on
 * the calling thread, so JS never manages contexts. `Device.open(n)` returns the same object for
 * the same ordinal. The attributes are read once at open.
 */
export class Device {
  private static readonly opened = new Map<number, Device>();

  static {
    onAddonReset(() => Device.opened.clear());
  }

  /** Number of CUDA devices; 0 (never an exception) when there is no driver. */
  static count(): number {
    const p = probe();
    return p.driver ? p.deviceCount : 0;
  }

  /**
   * Opens device `ordinal` (default 0). Throws `CudaUnavailableError` (with the probe's reason)
   * when no driver or device is usable, `ArgumentError` for an ordinal out of range.
   */
  static open(ordinal = 0): Device {
    requireIntegerIn('ordinal', ordinal, 0, 1024);
    const existing = Device.opened.get(ordinal);
    if (existing) return existing;
    const p = probe();
    if (!p.driver || p.deviceCount === 0) throw new CudaUnavailableError(p.reason ?? 'the CUDA driver reports no devices');
    if (ordinal >= p.deviceCount) {
      throw new ArgumentError('ordinal', `must be below the device count ${p.deviceCount}`, ordinal);
    }
    const native = loadAddon();
    const device = new Device(ordinal, native.deviceInfo(ordinal), native.driverVersion());
    Device.opened.set(ordinal, device);
    return device;
  }

  readonly ordinal: number;
  readonly name: string;
  readonly computeCapability: ComputeCapability;
  /** The arch kernels are compiled for by default (`sm_90a` on compute capability 9.0). */
  readonly arch: CudaArch;
  readonly smCount: number;
  readonly sharedMemoryPerBlock: number;
  /** The most dynamic + static shared memory one block may opt in to. */
  readonly sharedMemoryPerBlockOptin: number;
  readonly sharedMemoryPerMultiprocessor: number;
  readonly l2CacheBytes: number;
  readonly totalMemoryBytes: number;
  /** The driver's CUDA version as a number: 13000 for CUDA 13.0. */
  readonly driverVersion: number;
  readonly maxThreadsPerBlock: number;
  readonly maxBlockDim: Dim3Tuple;
  readonly maxGridDim: Dim3Tuple;
  readonly warpSize: number;
  readonly registersPerBlock: number;
  readonly registersPerMultiprocessor: number;
  readonly clusterLaunch: boolean;
  /** Every attribute as the driver reported it. */
  readonly info: Readonly<NativeDeviceInfo>;

  private constructor(ordinal: number, info: NativeDeviceInfo, driverVersion: number) {
    this.ordinal = ordinal;
    this.info = Object.freeze({ ...info });
    this.name = info.name;
    this.computeCapability = Object.freeze({ major: info.major, minor: info.minor });
    this.arch = archForComputeCapability(this.computeCapability);
    this.smCount = info.multiprocessorCount;
    this.sharedMemoryPerBlock = info.sharedMemoryPerBlock;
    this.sharedMemoryPerBlockOptin = info.sharedMemoryPerBlockOptin;
    this.sharedMemoryPerMultiprocessor = info.sharedMemoryPerMultiprocessor;
    this.l2CacheBytes = info.l2CacheBytes;
    this.totalMemoryBytes = info.totalMemoryBytes;
    this.driverVersion = driverVersion;
    this.maxThreadsPerBlock = info.maxThreadsPerBlock;
    this.maxBlockDim = Object.freeze([info.maxBlockDimX, info.maxBlockDimY, info.maxBlockDimZ] as const);
    this.maxGridDim = Object.freeze([info.maxGridDimX, info.maxGridDimY, info.maxGridDimZ] as const);
    this.warpSize = info.warpSize;
    this.registersPerBlock = info.registersPerBlock;
    this.registersPerMultiprocessor = info.registersPerMultiprocessor;
    this.clusterLaunch = info.clusterLaunch !== 0;
  }

  /** Free and total device memory in bytes, now. */
  memoryInfo(): { free: number; total: number } {
    return loadAddon().memGetInfo(this.ordinal);
  }

  /** Waits for all work on the device's primary context (`cuCtxSynchronize`). */
  synchronize(): void {
    loadAddon().contextSynchronize(this.ordinal);
    launchesSettled();
  }

  /**
   * Allocates `bytes` of device memory (0 is allowed and allocates nothing). `label` names the
   * allocation in a `DeviceOutOfMemoryError`.
   */
  alloc(bytes: number, label?: string): DeviceBuffer {
    return DeviceBuffer.alloc(this, bytes, label);
  }

  /** Allocates a buffer of `host.byteLength` bytes and copies `host` into it. */
  upload(host: ArrayBufferView): DeviceBuffer {
    const buffer = DeviceBuffer.alloc(this, host.byteLength);
    try {
      return buffer.copyFromHost(host);
    } catch (error) {
      buffer.dispose();
      throw error;
    }
  }

  createStream(options: StreamOptions = {}): Stream {
    return Stream.create(this, options);
  }

  createEvent(options: CudaEventOptions = {}): CudaEvent {
    return CudaEvent.create(this, options);
  }

  /** Loads a cubin, fatbin (bytes) or PTX (text or bytes) into this device's context. */
  loadModule(image: Uint8Array | string): CudaModule {
    return CudaModule.load(this, image);
  }

  toString(): string {
    return `Device(${this.ordinal}: ${this.name}, ${this.arch})`;
  }
}
