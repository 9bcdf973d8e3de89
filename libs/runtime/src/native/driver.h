// Lazy loading of libcuda.so.1 and NVRTC. Nothing is loaded when the addon is required: the
// first probe() or device call dlopens the library and resolves every entry point once.
#pragma once

#include <string>

#include "cudaDriverApi.h"
#include "nvrtcApi.h"

namespace tk {

struct DriverApi {
  bool loaded = false;       // library opened and every required symbol found
  bool initialized = false;  // cuInit(0) returned CUDA_SUCCESS
  CUresult initResult = 0;   // what cuInit(0) returned
  std::string path;          // the file dlopen succeeded with
  std::string error;         // why loaded or initialized is false

  PFN_cuInit cuInit = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetName cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem cuDeviceTotalMem = nullptr;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuCtxGetCurrent cuCtxGetCurrent = nullptr;
  PFN_cuCtxSetCurrent cuCtxSetCurrent = nullptr;
  PFN_cuCtxSynchronize cuCtxSynchronize = nullptr;
  PFN_cuMemGetInfo cuMemGetInfo = nullptr;
  PFN_cuMemAlloc cuMemAlloc = nullptr;
  PFN_cuMemFree cuMemFree = nullptr;
  PFN_cuMemcpyHtoD cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH cuMemcpyDtoH = nullptr;
  PFN_cuMemcpyDtoD cuMemcpyDtoD = nullptr;
  PFN_cuMemcpyHtoDAsync cuMemcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync cuMemcpyDtoHAsync = nullptr;
  PFN_cuMemcpyDtoDAsync cuMemcpyDtoDAsync = nullptr;
  PFN_cuMemsetD8 cuMemsetD8 = nullptr;
  PFN_cuMemsetD8Async cuMemsetD8Async = nullptr;
  PFN_cuStreamCreate cuStreamCreate = nullptr;
  PFN_cuStreamDestroy cuStreamDestroy = nullptr;
  PFN_cuStreamSynchronize cuStreamSynchronize = nullptr;
  PFN_cuStreamQuery cuStreamQuery = nullptr;
  PFN_cuEventCreate cuEventCreate = nullptr;
  PFN_cuEventDestroy cuEventDestroy = nullptr;
  PFN_cuEventRecord cuEventRecord = nullptr;
  PFN_cuEventSynchronize cuEventSynchronize = nullptr;
  PFN_cuEventQuery cuEventQuery = nullptr;
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx = nullptr;
  PFN_cuModuleUnload cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction cuModuleGetFunction = nullptr;
  PFN_cuFuncGetAttribute cuFuncGetAttribute = nullptr;
  PFN_cuFuncSetAttribute cuFuncSetAttribute = nullptr;
  PFN_cuLaunchKernel cuLaunchKernel = nullptr;
  // Optional: newer drivers only. Null when absent; callers report CUDA_ERROR_NOT_SUPPORTED.
  PFN_cuLaunchKernelEx cuLaunchKernelEx = nullptr;
  PFN_cuFuncGetParamInfo cuFuncGetParamInfo = nullptr;
  PFN_cuTensorMapEncodeTiled cuTensorMapEncodeTiled = nullptr;
  // Optional: CUDA graphs (stream capture and replay). Null when absent; the graph bindings
  // then fail with CUDA_ERROR_NOT_SUPPORTED naming the missing entry points (graphs.cc).
  PFN_cuStreamBeginCapture cuStreamBeginCapture = nullptr;  // the _v2 entry point (with a mode)
  PFN_cuStreamEndCapture cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy cuGraphDestroy = nullptr;
};

struct NvrtcApi {
  bool loaded = false;
  std::string path;
  std::string error;
  int major = 0;
  int minor = 0;

  PFN_nvrtcGetErrorString nvrtcGetErrorString = nullptr;
  PFN_nvrtcVersion nvrtcVersion = nullptr;
  PFN_nvrtcCreateProgram nvrtcCreateProgram = nullptr;
  PFN_nvrtcDestroyProgram nvrtcDestroyProgram = nullptr;
  PFN_nvrtcCompileProgram nvrtcCompileProgram = nullptr;
  PFN_nvrtcGetSize nvrtcGetProgramLogSize = nullptr;
  PFN_nvrtcGetBytes nvrtcGetProgramLog = nullptr;
  PFN_nvrtcGetSize nvrtcGetCUBINSize = nullptr;
  PFN_nvrtcGetBytes nvrtcGetCUBIN = nullptr;
  PFN_nvrtcGetSize nvrtcGetPTXSize = nullptr;
  PFN_nvrtcGetBytes nvrtcGetPTX = nullptr;
};

// Loads (once, thread-safe) and returns the driver table. Never throws; inspect loaded/initialized.
const DriverApi& driver();

// Loads (once, thread-safe) and returns the NVRTC table. Never throws; inspect loaded.
const NvrtcApi& nvrtc();

// "CUDA_ERROR_OUT_OF_MEMORY" for a code, or "CUDA_ERROR_<code>" when the driver cannot name it.
std::string cudaErrorName(CUresult code);
std::string cudaErrorString(CUresult code);

}  // namespace tk
