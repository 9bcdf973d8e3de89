import type {
  EventHandle,
  FunctionHandle,
  GraphHandle,
  ModuleHandle,
  NativeAddon,
  NativeDeviceInfo,
  NativeFunctionAttributes,
  StreamHandle,
} from '../addon.ts';
import { setAddonForTesting } from '../addon.ts';
import { CudaError } from '../cudaError.ts';

/** An H200's attributes, as the driver reports them (used by the fake device). */
export const H200_INFO: NativeDeviceInfo = {
  name: 'NVIDIA H200 (fake)',
  totalMemoryBytes: 150_754_820_096,
  major: 9,
  minor: 0,
  multiprocessorCount: 132,
  maxThreadsPerBlock: 1024,
  maxBlockDimX: 1024,
  maxBlockDimY: 1024,
  maxBlockDimZ: 64,
  maxGridDimX: 2_147_483_647,
  maxGridDimY: 65_535,
  maxGridDimZ: 65_535,
  sharedMemoryPerBlock: 49_152,
  sharedMemoryPerBlockOptin: 232_448,
  sharedMemoryPerMultiprocessor: 233_472,
  reservedSharedMemoryPerBlock: 1024,
  totalConstantMemory: 65_536,
  warpSize: 32,
  registersPerBlock: 65_536,
  registersPerMultiprocessor: 65_536,
  maxThreadsPerMultiprocessor: 2048,
  l2CacheBytes: 52_428_800,
  clockRateKHz: 1_980_000,
  memoryClockRateKHz: 3_201_000,
  memoryBusWidthBits: 6144,
  pciBusId: 0,
  pciDeviceId: 0,
  clusterLaunch: 1,
};

/** A launch the fake recorded, with each parameter's bytes cut out of the packed buffer. */
export interface RecordedLaunch {
  readonly kernel: string;
  readonly grid: readonly number[];
  readonly block: readonly number[];
  readonly sharedBytes: number;
  readonly cluster: readonly number[] | undefined;
  readonly params: readonly Uint8Array[];
}

export interface FakeKernel {
  readonly params: readonly { offset: number; size: number }[] | null;
  readonly attributes?: Partial<NativeFunctionAttributes>;
}

/** The fake addon plus what tests inspect: live allocations, launches, frees. */
export interface FakeAddon extends NativeAddon {
  readonly allocations: Map<bigint, Uint8Array>;
  /** Launches that ran: direct ones, and each replay of a graph's captured ones (capture runs nothing). */
  readonly launches: RecordedLaunch[];
  /** Graphs made by streamEndCapture and not yet destroyed. */
  readonly liveGraphs: Set<GraphHandle>;
  readonly freed: bigint[];
  /** Kernels every loaded module exposes, by name. */
  readonly kernels: Map<string, FakeKernel>;
}

function cudaError(call: string, code: number, name: string): CudaError {
  return new CudaError(call, code, name, 'fake driver error');
}

// What the fake keeps in a stream handle: the launches captured while a capture is under way.
interface FakeStream {
  capture?: RecordedLaunch[];
}
interface FakeGraph {
  readonly launches: readonly RecordedLaunch[];
  destroyed: boolean;
}

/**
 * A JS stand-in for the native addon with one device and host-memory "device memory", so the TS
 * API (validation, views, packing, disposal) is unit-tested without CUDA. Addresses start at
 * 0x7f00_0000_0000 and are 256-byte aligned like cuMemAlloc's. Graph capture models kernel
 * launches only: launches on a capturing stream are kept for the graph, and each graph launch
 * appends them to `launches` (copies and memsets still happen at once).
 */
export function createFakeAddon(options: { totalMemory?: number } = {}): FakeAddon {
  const allocations = new Map<bigint, Uint8Array>();
  const launches: RecordedLaunch[] = [];
  const freed: bigint[] = [];
  const kernels = new Map<string, FakeKernel>();
  const liveGraphs = new Set<GraphHandle>();
  const totalMemory = options.totalMemory ?? 1 << 30;
  let next = 0x7f00_0000_0000n;
  let used = 0;

  function locate(ptr: bigint, bytes: number, call: string): { mem: Uint8Array; at: number } {
    for (const [base, mem] of allocations) {
      if (ptr >= base && ptr + BigInt(bytes) <= base + BigInt(mem.length)) return { mem, at: Number(ptr - base) };
    }
    throw cudaError(call, 1, 'CUDA_ERROR_INVALID_VALUE');
  }

  const fake: FakeAddon = {
    allocations,
    launches,
    liveGraphs,
    freed,
    kernels,
    abiVersion: 1,
    probe: () => ({ driver: true, driverVersion: 13000, deviceCount: 1, nvrtc: false }),
    setErrorFactory: () => undefined,
    deviceCount: () => 1,
    driverVersion: () => 13000,
    deviceInfo: () => ({ ...H200_INFO }),
    memGetInfo: () => ({ free: totalMemory - used, total: totalMemory }),
    contextSynchronize: () => undefined,
    isContextCurrent: () => true,
    clearCurrentContext: () => undefined,
    memAlloc: (_ordinal, bytes) => {
      if (used + bytes > totalMemory) throw cudaError('cuMemAlloc_v2', 2, 'CUDA_ERROR_OUT_OF_MEMORY');
      const ptr = next;
      next += BigInt(Math.ceil(Math.max(bytes, 1) / 256) * 256);
      allocations.set(ptr, new Uint8Array(bytes));
      used += bytes;
      return ptr;
    },
    memFree: (_ordinal, ptr) => {
      const mem = allocations.get(ptr);
      if (!mem) throw cudaError('cuMemFree_v2', 1, 'CUDA_ERROR_INVALID_VALUE');
      used -= mem.length;
      allocations.delete(ptr);
      freed.push(ptr);
    },
    memcpyHtoD: (_ordinal, dst, src) => {
      const { mem, at } = locate(dst, src.length, 'cuMemcpyHtoD_v2');
      mem.set(src, at);
    },
    memcpyDtoH: (_ordinal, dst, src) => {
      const { mem, at } = locate(src, dst.length, 'cuMemcpyDtoH_v2');
      dst.set(mem.subarray(at, at + dst.length));
    },
    memcpyDtoD: (_ordinal, dst, src, bytes) => {
      const from = locate(src, bytes, 'cuMemcpyDtoD_v2');
      const to = locate(dst, bytes, 'cuMemcpyDtoD_v2');
      to.mem.set(from.mem.slice(from.at, from.at + bytes), to.at);
    },
    memsetD8: (_ordinal, dst, value, bytes) => {
      const { mem, at } = locate(dst, bytes, 'cuMemsetD8_v2');
      mem.fill(value, at, at + bytes);
    },
    streamCreate: () => ({ kind: 'stream', live: true }) as unknown as StreamHandle,
    streamDestroy: () => undefined,
    streamSynchronize: () => undefined,
    streamSynchronizeAsync: () => Promise.resolve(),
    streamQuery: () => true,
    eventCreate: () => ({ kind: 'event', time: 0 }) as unknown as EventHandle,
    eventDestroy: () => undefined,
    eventRecord: (event) => {
      (event as unknown as { time: number }).time = performance.now();
    },
    eventSynchronize: () => undefined,
    eventQuery: () => true,
    eventElapsedTime: (start, end) => (end as unknown as { time: number }).time - (start as unknown as { time: number }).time,
    streamBeginCapture: (stream) => {
      const fakeStream = stream as unknown as FakeStream;
      if (fakeStream.capture) throw cudaError('cuStreamBeginCapture_v2', 401, 'CUDA_ERROR_ILLEGAL_STATE');
      fakeStream.capture = [];
    },
    streamEndCapture: (stream) => {
      const fakeStream = stream as unknown as FakeStream;
      const captured = fakeStream.capture;
      if (!captured) throw cudaError('cuStreamEndCapture', 401, 'CUDA_ERROR_ILLEGAL_STATE');
      delete fakeStream.capture;
      const fakeGraph: FakeGraph = { launches: captured, destroyed: false };
      const graph = fakeGraph as unknown as GraphHandle;
      liveGraphs.add(graph);
      return graph;
    },
    graphLaunch: (graph, stream) => {
      const fakeGraph = graph as unknown as FakeGraph;
      if (fakeGraph.destroyed) throw new Error('graph was destroyed');
      const into = (stream as unknown as FakeStream).capture ?? launches;
      into.push(...fakeGraph.launches);
    },
    graphDestroy: (graph) => {
      (graph as unknown as FakeGraph).destroyed = true;
      liveGraphs.delete(graph);
    },
    moduleLoad: () => ({ kind: 'module' }) as unknown as ModuleHandle,
    moduleUnload: () => undefined,
    moduleGetFunction: (_module, name) => {
      if (!kernels.has(name)) throw cudaError('cuModuleGetFunction', 500, 'CUDA_ERROR_NOT_FOUND');
      return { kind: 'function', name } as unknown as FunctionHandle;
    },
    funcGetAttributes: (fn) => ({
      maxThreadsPerBlock: 1024,
      staticSharedBytes: 0,
      constBytes: 0,
      localBytes: 0,
      numRegs: 16,
      ptxVersion: 90,
      binaryVersion: 90,
      maxDynamicSharedBytes: 49_152,
      ...kernels.get((fn as unknown as { name: string }).name)?.attributes,
    }),
    funcSetAttribute: (fn, attribute, value) => {
      const name = (fn as unknown as { name: string }).name;
      const kernel = kernels.get(name)!;
      if (attribute === 8) kernels.set(name, { ...kernel, attributes: { ...kernel.attributes, maxDynamicSharedBytes: value } });
    },
    funcGetParamInfo: (fn) => kernels.get((fn as unknown as { name: string }).name)?.params ?? null,
    launchKernel: (fn, grid, block, sharedBytes, stream, cluster, params, offsets) => {
      const name = (fn as unknown as { name: string }).name;
      const info = kernels.get(name)?.params;
      const into = (stream as unknown as FakeStream | undefined)?.capture ?? launches;
      into.push({
        kernel: name,
        grid: [...grid],
        block: [...block],
        sharedBytes,
        cluster: cluster ? [...cluster] : undefined,
        params: offsets.map((offset, i) => params.slice(offset, offset + (info?.[i]?.size ?? params.length - offset))),
      });
    },
    tensorMapEncodeTiled: () => new Uint8Array(128).fill(0xab),
    nvrtcInfo: () => ({ loaded: false, reason: 'fake' }),
    nvrtcCompile: () => Promise.reject(new Error('fake addon has no NVRTC')),
  };
  return fake;
}

/** Installs a fresh fake addon (and forgets opened devices); returns it. */
export function installFakeAddon(options: { totalMemory?: number } = {}): FakeAddon {
  const fake = createFakeAddon(options);
  setAddonForTesting(fake);
  return fake;
}

/** Restores normal addon loading. */
export function uninstallFakeAddon(): void {
  setAddonForTesting(undefined);
}
