import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TilekitError } from '@tilekit/numeric';
import { cudaErrorFromDriver } from './cudaError.ts';

/** File name of the compiled addon (binding.gyp target `tilekit_runtime`). */
export const ADDON_FILE = 'tilekit_runtime.node';

/** Opaque native handles (type-tagged N-API externals); the brand only keeps them apart in TS. */
export interface NativeHandle<Kind extends string> {
  readonly __tilekitHandle: Kind;
}
export type StreamHandle = NativeHandle<'stream'>;
export type EventHandle = NativeHandle<'event'>;
export type GraphHandle = NativeHandle<'graph'>;
export type ModuleHandle = NativeHandle<'module'>;
export type FunctionHandle = NativeHandle<'function'>;

/** What the native probe reports; see `probe()` for the TS-level result. */
export interface NativeProbe {
  driver: boolean;
  driverVersion?: number;
  deviceCount: number;
  nvrtc: boolean;
  nvrtcVersion?: string;
  libcuda?: string;
  libnvrtc?: string;
  reason?: string;
  nvrtcReason?: string;
}

/** Raw device attributes, as read by `deviceInfo`. */
export interface NativeDeviceInfo {
  name: string;
  totalMemoryBytes: number;
  major: number;
  minor: number;
  multiprocessorCount: number;
  maxThreadsPerBlock: number;
  maxBlockDimX: number;
  maxBlockDimY: number;
  maxBlockDimZ: number;
  maxGridDimX: number;
  maxGridDimY: number;
  maxGridDimZ: number;
  sharedMemoryPerBlock: number;
  sharedMemoryPerBlockOptin: number;
  sharedMemoryPerMultiprocessor: number;
  reservedSharedMemoryPerBlock: number;
  totalConstantMemory: number;
  warpSize: number;
  registersPerBlock: number;
  registersPerMultiprocessor: number;
  maxThreadsPerMultiprocessor: number;
  l2CacheBytes: number;
  clockRateKHz: number;
  memoryClockRateKHz: number;
  memoryBusWidthBits: number;
  pciBusId: number;
  pciDeviceId: number;
  clusterLaunch: number;
}

/** Function attributes (`cuFuncGetAttribute`). */
export interface NativeFunctionAttributes {
  maxThreadsPerBlock: number;
  staticSharedBytes: number;
  constBytes: number;
  localBytes: number;
  numRegs: number;
  ptxVersion: number;
  binaryVersion: number;
  maxDynamicSharedBytes: number;
}

export interface NativeNvrtcResult {
  ok: boolean;
  result: number;
  resultName: string;
  stage: string;
  log: string;
  cubin?: Uint8Array;
  ptx?: string;
}

type Dim3Tuple = readonly [number, number, number];

/**
 * The native surface, one function per driver operation. Arguments are validated in TS first;
 * the addon re-checks only what would otherwise read out of bounds.
 */
export interface NativeAddon {
  abiVersion: number;
  probe(): NativeProbe;
  setErrorFactory(factory: (call: string, code: number, name: string, text: string, detail: string) => Error): void;
  deviceCount(): number;
  driverVersion(): number;
  deviceInfo(ordinal: number): NativeDeviceInfo;
  memGetInfo(ordinal: number): { free: number; total: number };
  contextSynchronize(ordinal: number): void;
  isContextCurrent(ordinal: number): boolean;
  clearCurrentContext(): void;
  memAlloc(ordinal: number, bytes: number): bigint;
  memFree(ordinal: number, ptr: bigint): void;
  memcpyHtoD(ordinal: number, dst: bigint, src: Uint8Array, stream?: StreamHandle): void;
  memcpyDtoH(ordinal: number, dst: Uint8Array, src: bigint, stream?: StreamHandle): void;
  memcpyDtoD(ordinal: number, dst: bigint, src: bigint, bytes: number, stream?: StreamHandle): void;
  memsetD8(ordinal: number, dst: bigint, value: number, bytes: number, stream?: StreamHandle): void;
  streamCreate(ordinal: number, nonBlocking: boolean): StreamHandle;
  streamDestroy(stream: StreamHandle): void;
  streamSynchronize(stream: StreamHandle): void;
  streamSynchronizeAsync(stream: StreamHandle): Promise<void>;
  streamQuery(stream: StreamHandle): boolean;
  eventCreate(ordinal: number, flags: number): EventHandle;
  eventDestroy(event: EventHandle): void;
  eventRecord(event: EventHandle, stream?: StreamHandle): void;
  eventSynchronize(event: EventHandle): void;
  eventQuery(event: EventHandle): boolean;
  eventElapsedTime(start: EventHandle, end: EventHandle): number;
  /** `mode` is a CUstreamCaptureMode value (0 global, 1 thread-local, 2 relaxed). */
  streamBeginCapture(stream: StreamHandle, mode: number): void;
  /** Ends the capture and returns the instantiated (executable) graph; throws if the capture failed. */
  streamEndCapture(stream: StreamHandle): GraphHandle;
  graphLaunch(graph: GraphHandle, stream: StreamHandle): void;
  /** Idempotent. */
  graphDestroy(graph: GraphHandle): void;
  moduleLoad(ordinal: number, image: Uint8Array): ModuleHandle;
  moduleUnload(module: ModuleHandle): void;
  moduleGetFunction(module: ModuleHandle, name: string): FunctionHandle;
  funcGetAttributes(fn: FunctionHandle): NativeFunctionAttributes;
  funcSetAttribute(fn: FunctionHandle, attribute: number, value: number): void;
  funcGetParamInfo(fn: FunctionHandle): readonly { offset: number; size: number }[] | null;
  launchKernel(
    fn: FunctionHandle,
    grid: Dim3Tuple,
    block: Dim3Tuple,
    sharedBytes: number,
    stream: StreamHandle | undefined,
    cluster: Dim3Tuple | undefined,
    params: Uint8Array,
    offsets: readonly number[],
  ): void;
  tensorMapEncodeTiled(
    ordinal: number,
    dtype: number,
    rank: number,
    address: bigint,
    globalDims: readonly bigint[],
    globalStrides: readonly bigint[],
    boxDims: readonly number[],
    elementStrides: readonly number[],
    interleave: number,
    swizzle: number,
    l2Promotion: number,
    oobFill: number,
  ): Uint8Array;
  nvrtcInfo(): { loaded: boolean; path?: string; major?: number; minor?: number; reason?: string };
  nvrtcCompile(source: string, fileName: string, options: readonly string[]): Promise<NativeNvrtcResult>;
}

/** The addon could not be found or loaded; the message lists every path tried and the remedy. */
export class AddonLoadError extends TilekitError {
  readonly tried: readonly string[];

  constructor(tried: readonly string[], cause: string) {
    super('runtime/addon-load', addonLoadMessage(tried, cause));
    this.tried = tried;
  }
}

/**
 * One line: what failed, where it looked, and how to get the addon. A missing file usually means
 * the package's install script did not run (npm 11 runs a dependency's install script only when
 * the project's `allowScripts` approves it).
 */
function addonLoadMessage(tried: readonly string[], cause: string): string {
  const how =
    cause === 'no such file'
      ? 'the install script of @tilekit/runtime did not build it (npm 11 runs it only when allowScripts in your package.json approves "@tilekit/runtime"); build it now with `npx tilekit-build-native`'
      : 'rebuild it with `npx tilekit-build-native`';
  return `cannot load the tilekit native addon (${ADDON_FILE}): ${cause} (tried ${tried.join(', ')}); ${how}, or set TILEKIT_ADDON_PATH to a built ${ADDON_FILE}`;
}

/**
 * Where the addon may live, in order: `$TILEKIT_ADDON_PATH`; beside this module (a bundle ships
 * the `.node` next to itself); `../build/Release/` (the package's own node-gyp build).
 */
export function addonCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const override = env['TILEKIT_ADDON_PATH'];
  if (override) return [resolve(override)];
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, ADDON_FILE), join(here, '..', 'build', 'Release', ADDON_FILE)];
}

let loaded: NativeAddon | undefined;
let loadFailure: AddonLoadError | undefined;

/**
 * Loads the addon once (later calls return the same object, or rethrow the same failure) and
 * registers the error factory (CudaError, or DeviceFaultError for sticky faults). Loading touches no CUDA library.
 */
export function loadAddon(): NativeAddon {
  if (loaded) return loaded;
  if (loadFailure) throw loadFailure;
  const tried = addonCandidates();
  const path = tried.find((p) => existsSync(p));
  if (path === undefined) {
    loadFailure = new AddonLoadError(tried, 'no such file');
    throw loadFailure;
  }
  try {
    const native = createRequire(import.meta.url)(path) as NativeAddon;
    native.setErrorFactory(cudaErrorFromDriver);
    loaded = native;
    return native;
  } catch (error) {
    loadFailure = new AddonLoadError([path], error instanceof Error ? error.message : String(error));
    throw loadFailure;
  }
}

/**
 * Replaces the addon for this process (`undefined` restores normal loading). Unit tests use it to
 * run the TS API against a JS fake on machines without CUDA; nothing else should.
 */
export function setAddonForTesting(fake: NativeAddon | undefined): void {
  loaded = fake;
  loadFailure = undefined;
  for (const listener of resetListeners) listener();
}

const resetListeners: (() => void)[] = [];

/** Runs `listener` whenever `setAddonForTesting` swaps the addon (caches keyed on it reset). */
export function onAddonReset(listener: () => void): void {
  resetListeners.push(listener);
}

/** The path `loadAddon` would load, or undefined when none exists. */
export function findAddon(): string | undefined {
  return addonCandidates().find((p) => existsSync(p));
}
