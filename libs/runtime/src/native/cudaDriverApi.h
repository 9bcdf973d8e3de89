// The few CUDA driver API declarations the addon uses, written out by hand so that the addon
// builds on machines without a CUDA toolkit. Only types and enum values that cross the ABI are
// declared; every entry point is reached through a function pointer resolved with dlsym
// (driver.cc), so nothing here is linked. Values follow the public driver API reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tk {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_opaque*;
using CUmodule = struct CUmod_opaque*;
using CUfunction = struct CUfunc_opaque*;
using CUstream = struct CUstream_opaque*;
using CUevent = struct CUevent_opaque*;
using CUgraph = struct CUgraph_opaque*;
using CUgraphExec = struct CUgraphExec_opaque*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;

// CUstreamCaptureMode values (the `mode` of cuStreamBeginCapture_v2).
enum StreamCaptureMode : int {
  kStreamCaptureModeGlobal = 0,
  kStreamCaptureModeThreadLocal = 1,
  kStreamCaptureModeRelaxed = 2,
};

// CUdevice_attribute values.
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kTotalConstantMemory = 9,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kPciBusId = 33,
  kPciDeviceId = 34,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
  kReservedSharedMemoryPerBlock = 111,
  kClusterLaunch = 120,
};

// CUfunction_attribute values.
enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncConstSizeBytes = 2,
  kFuncLocalSizeBytes = 3,
  kFuncNumRegs = 4,
  kFuncPtxVersion = 5,
  kFuncBinaryVersion = 6,
  kFuncMaxDynamicSharedSizeBytes = 8,
  kFuncNonPortableClusterSizeAllowed = 14,
};

// CUjit_option values used to collect the loader's logs.
enum JitOption : int {
  kJitInfoLogBuffer = 3,
  kJitInfoLogBufferSizeBytes = 4,
  kJitErrorLogBuffer = 5,
  kJitErrorLogBufferSizeBytes = 6,
  kJitLogVerbose = 12,
};

// CUlaunchAttributeID value for thread-block clusters.
constexpr int kLaunchAttributeClusterDimension = 4;

// CUlaunchAttributeValue is a 64-byte union; only the cluster member is used here.
union LaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
};

struct LaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  LaunchAttributeValue value;
};

struct LaunchConfig {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  LaunchAttribute* attrs;
  unsigned int numAttrs;
};

// CUtensorMap: 128 opaque bytes (16 qwords), 64-byte aligned at least; we over-align.
struct alignas(128) TensorMap {
  std::uint64_t opaque[16];
};
static_assert(sizeof(TensorMap) == 128, "CUtensorMap is 128 bytes");
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");

// Function-pointer types, one per entry point (CUDAAPI is the default calling convention on Linux).
using PFN_cuInit = CUresult (*)(unsigned int);
using PFN_cuDriverGetVersion = CUresult (*)(int*);
using PFN_cuGetErrorName = CUresult (*)(CUresult, const char**);
using PFN_cuGetErrorString = CUresult (*)(CUresult, const char**);
using PFN_cuDeviceGetCount = CUresult (*)(int*);
using PFN_cuDeviceGet = CUresult (*)(CUdevice*, int);
using PFN_cuDeviceGetName = CUresult (*)(char*, int, CUdevice);
using PFN_cuDeviceGetAttribute = CUresult (*)(int*, int, CUdevice);
using PFN_cuDeviceTotalMem = CUresult (*)(std::size_t*, CUdevice);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext*);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuMemGetInfo = CUresult (*)(std::size_t*, std::size_t*);
using PFN_cuMemAlloc = CUresult (*)(CUdeviceptr*, std::size_t);
using PFN_cuMemFree = CUresult (*)(CUdeviceptr);
using PFN_cuMemcpyHtoD = CUresult (*)(CUdeviceptr, const void*, std::size_t);
using PFN_cuMemcpyDtoH = CUresult (*)(void*, CUdeviceptr, std::size_t);
using PFN_cuMemcpyDtoD = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t);
using PFN_cuMemcpyHtoDAsync = CUresult (*)(CUdeviceptr, const void*, std::size_t, CUstream);
using PFN_cuMemcpyDtoHAsync = CUresult (*)(void*, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemcpyDtoDAsync = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemsetD8 = CUresult (*)(CUdeviceptr, unsigned char, std::size_t);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr, unsigned char, std::size_t, CUstream);
using PFN_cuStreamCreate = CUresult (*)(CUstream*, unsigned int);
using PFN_cuStreamDestroy = CUresult (*)(CUstream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream);
using PFN_cuStreamQuery = CUresult (*)(CUstream);
using PFN_cuEventCreate = CUresult (*)(CUevent*, unsigned int);
using PFN_cuEventDestroy = CUresult (*)(CUevent);
using PFN_cuEventRecord = CUresult (*)(CUevent, CUstream);
using PFN_cuEventSynchronize = CUresult (*)(CUevent);
using PFN_cuEventQuery = CUresult (*)(CUevent);
using PFN_cuEventElapsedTime = CUresult (*)(float*, CUevent, CUevent);
using PFN_cuStreamBeginCapture = CUresult (*)(CUstream, int);
using PFN_cuStreamEndCapture = CUresult (*)(CUstream, CUgraph*);
using PFN_cuGraphInstantiateWithFlags = CUresult (*)(CUgraphExec*, CUgraph, unsigned long long);
using PFN_cuGraphLaunch = CUresult (*)(CUgraphExec, CUstream);
using PFN_cuGraphExecDestroy = CUresult (*)(CUgraphExec);
using PFN_cuGraphDestroy = CUresult (*)(CUgraph);
using PFN_cuModuleLoadDataEx = CUresult (*)(CUmodule*, const void*, unsigned int, int*, void**);
using PFN_cuModuleUnload = CUresult (*)(CUmodule);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using PFN_cuFuncGetAttribute = CUresult (*)(int*, int, CUfunction);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction, int, int);
using PFN_cuFuncGetParamInfo = CUresult (*)(CUfunction, std::size_t, std::size_t*, std::size_t*);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
using PFN_cuLaunchKernelEx = CUresult (*)(const LaunchConfig*, CUfunction, void**, void**);
using PFN_cuTensorMapEncodeTiled = CUresult (*)(TensorMap*, int, std::uint32_t, void*, const std::uint64_t*,
                                                const std::uint64_t*, const std::uint32_t*, const std::uint32_t*, int,
                                                int, int, int);

}  // namespace tk
