export { ADDON_FILE, AddonLoadError, addonCandidates, findAddon, loadAddon } from './addon.ts';
export type { NativeAddon, NativeDeviceInfo, NativeProbe } from './addon.ts';
export { archForComputeCapability, archRunsOn, parseArch } from './arch.ts';
export type { ComputeCapability, CudaArch } from './arch.ts';
export { CompileError } from './compileError.ts';
export type { CompileErrorDetails } from './compileError.ts';
export { firstError, parseDiagnostics } from './compileDiagnostics.ts';
export type { CompileDiagnostic } from './compileDiagnostics.ts';
export { CachingCompiler, resolveArch } from './compiler.ts';
export type { CompileRequest, CompileResult, Compiler, CompilerKind, CompilerOptions } from './compiler.ts';
export { CudaError, CudaUnavailableError, DeviceFaultError, DeviceOutOfMemoryError, cudaErrorFromDriver } from './cudaError.ts';
export { unsettledLaunches } from './launchJournal.ts';
export { CudaEvent } from './cudaEvent.ts';
export { timeBackToBack } from './timeBackToBack.ts';
export type { BackToBackTimes, TimeBackToBackOptions } from './timeBackToBack.ts';
export { timeLaunches } from './timeLaunches.ts';
export type { TimeLaunchesOptions } from './timeLaunches.ts';
export type { CudaEventOptions } from './cudaEvent.ts';
export { CudaGraph } from './cudaGraph.ts';
export type { CudaGraphCaptureMode, CudaGraphCaptureOptions } from './cudaGraph.ts';
export { CudaModule, moduleImageKind } from './cudaModule.ts';
export type { ModuleImageKind } from './cudaModule.ts';
export { Device } from './device.ts';
export type { Dim3Tuple } from './device.ts';
export { DeviceBuffer } from './deviceBuffer.ts';
export type { CopyOptions } from './deviceBuffer.ts';
export { collectedWithoutDispose, DisposedError } from './disposal.ts';
export { Kernel } from './kernel.ts';
export { LoadedKernel, type KernelLaunchGeometry, type LoadableInstance } from './loadedKernel.ts';
export { buildOncePerInstance, compileInstance, loadInstance, ParamLayoutMismatchError } from './kernelInstance.ts';
export type { CompilableInstance, InstanceBuilder, LoadedInstance } from './kernelInstance.ts';
export type { KernelAttributes } from './kernel.ts';
export { kernelArgs, KernelArgsBuilder } from './kernelArgs.ts';
export type { HasDevicePointer, PackedKernelArgs } from './kernelArgs.ts';
export { CACHE_FORMAT, CachePublishError, CAP_RESCAN_STORES, cacheKey, defaultCacheDir, KernelCache } from './kernelCache.ts';
export type { CacheEntry, CacheEntryMeta, CacheKeyParts, KernelCacheOptions } from './kernelCache.ts';
export { CACHE_EVICTION_TARGET, cacheEnabled, cacheMaxBytes, DEFAULT_CACHE_MAX_MB, kernelCacheSettings } from './kernelCacheSettings.ts';
export type { KernelCacheSettings } from './kernelCacheSettings.ts';
export { scanKernelCache } from './kernelCacheScan.ts';
export type { CacheItem, CacheItemKind } from './kernelCacheScan.ts';
export { cacheUsage, kernelCacheUsage, planEviction, pruneKernelCache, TEMPORARY_GRACE_MS } from './cachePrune.ts';
export type { CacheUsage, EvictionRule, PruneOptions, PruneResult } from './cachePrune.ts';
export { CACHE_CLI_USAGE, CacheCliUsageError, parseCacheCliArgs, runCacheCli } from './cacheCli.ts';
export type { CacheCliArgs, CacheCliIo } from './cacheCli.ts';
export { checkKernelArgs, checkLaunch, dim3 } from './launch.ts';
export type { CheckedLaunch, Dim3, KernelParamInfo, LaunchConfig, LaunchLimits } from './launch.ts';
export { CompilerUnavailableError, NVCC_BASE_FLAGS, NvccCompiler } from './nvccCompiler.ts';
export type { NvccOptions } from './nvccCompiler.ts';
export { NvrtcCompiler } from './nvrtcCompiler.ts';
export type { NvrtcOptions } from './nvrtcCompiler.ts';
export { formatDriverVersion, probe } from './probe.ts';
export type { ProbeResult } from './probe.ts';
export { NO_RESOURCES, parsePtxasInfo } from './ptxasInfo.ts';
export type { KernelResources } from './ptxasInfo.ts';
export { Stream } from './stream.ts';
export type { StreamOptions } from './stream.ts';
export {
  checkTiledTensorMap,
  encodeTensorMapTiled,
  TENSOR_MAP_DTYPES,
  TENSOR_MAP_INTERLEAVES,
  TENSOR_MAP_L2_PROMOTIONS,
  TENSOR_MAP_OOB_FILLS,
  TENSOR_MAP_SWIZZLES,
} from './tensorMap.ts';
export type {
  CheckedTensorMap,
  TensorMapDtype,
  TensorMapInterleave,
  TensorMapL2Promotion,
  TensorMapOobFill,
  TensorMapSwizzle,
  TiledTensorMapOptions,
} from './tensorMap.ts';
export { checkDeviceRange, type DeviceRange } from './deviceRange.ts';
