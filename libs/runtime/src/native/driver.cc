#include "driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace tk {
namespace {

// Opens the first library of `candidates` that dlopen accepts; collects every dlerror otherwise.
void* openFirst(const std::vector<std::string>& candidates, std::string* opened, std::string* error) {
  std::string errors;
  for (const auto& name : candidates) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      *opened = name;
      return handle;
    }
    const char* why = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += why != nullptr ? why : name + ": unknown dlopen error";
  }
  *error = errors;
  return nullptr;
}

template <typename Fn>
bool resolve(void* lib, Fn* slot, const char* primary, const char* fallback, std::string* missing) {
  void* symbol = dlsym(lib, primary);
  if (symbol == nullptr && fallback != nullptr) symbol = dlsym(lib, fallback);
  *slot = reinterpret_cast<Fn>(symbol);
  if (symbol == nullptr && missing != nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += primary;
  }
  return symbol != nullptr;
}

std::vector<std::string> candidatesFrom(const char* envName, std::vector<std::string> defaults) {
  const char* override = std::getenv(envName);
  if (override != nullptr && *override != '\0') return {override};
  return defaults;
}

DriverApi loadDriver() {
  DriverApi api;
  void* lib = openFirst(candidatesFrom("TILEKIT_LIBCUDA_PATH", {"libcuda.so.1", "libcuda.so"}), &api.path, &api.error);
  if (lib == nullptr) {
    api.error = "cannot load the CUDA driver library (libcuda.so.1): " + api.error;
    return api;
  }
  std::string missing;
  // Versioned names first: they are what cuda.h maps the plain names to (64-bit sizes, no PTDS).
  resolve(lib, &api.cuInit, "cuInit", nullptr, &missing);
  resolve(lib, &api.cuDriverGetVersion, "cuDriverGetVersion", nullptr, &missing);
  resolve(lib, &api.cuGetErrorName, "cuGetErrorName", nullptr, &missing);
  resolve(lib, &api.cuGetErrorString, "cuGetErrorString", nullptr, &missing);
  resolve(lib, &api.cuDeviceGetCount, "cuDeviceGetCount", nullptr, &missing);
  resolve(lib, &api.cuDeviceGet, "cuDeviceGet", nullptr, &missing);
  resolve(lib, &api.cuDeviceGetName, "cuDeviceGetName", nullptr, &missing);
  resolve(lib, &api.cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr, &missing);
  resolve(lib, &api.cuDeviceTotalMem, "cuDeviceTotalMem_v2", nullptr, &missing);
  resolve(lib, &api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr, &missing);
  resolve(lib, &api.cuCtxGetCurrent, "cuCtxGetCurrent", nullptr, &missing);
  resolve(lib, &api.cuCtxSetCurrent, "cuCtxSetCurrent", nullptr, &missing);
  resolve(lib, &api.cuCtxSynchronize, "cuCtxSynchronize", nullptr, &missing);
  resolve(lib, &api.cuMemGetInfo, "cuMemGetInfo_v2", nullptr, &missing);
  resolve(lib, &api.cuMemAlloc, "cuMemAlloc_v2", nullptr, &missing);
  resolve(lib, &api.cuMemFree, "cuMemFree_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyHtoD, "cuMemcpyHtoD_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyDtoH, "cuMemcpyDtoH_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyDtoD, "cuMemcpyDtoD_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", nullptr, &missing);
  resolve(lib, &api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", nullptr, &missing);
  resolve(lib, &api.cuMemsetD8, "cuMemsetD8_v2", nullptr, &missing);
  resolve(lib, &api.cuMemsetD8Async, "cuMemsetD8Async", nullptr, &missing);
  resolve(lib, &api.cuStreamCreate, "cuStreamCreate", nullptr, &missing);
  resolve(lib, &api.cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy", &missing);
  resolve(lib, &api.cuStreamSynchronize, "cuStreamSynchronize", nullptr, &missing);
  resolve(lib, &api.cuStreamQuery, "cuStreamQuery", nullptr, &missing);
  resolve(lib, &api.cuEventCreate, "cuEventCreate", nullptr, &missing);
  resolve(lib, &api.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy", &missing);
  resolve(lib, &api.cuEventRecord, "cuEventRecord", nullptr, &missing);
  resolve(lib, &api.cuEventSynchronize, "cuEventSynchronize", nullptr, &missing);
  resolve(lib, &api.cuEventQuery, "cuEventQuery", nullptr, &missing);
  resolve(lib, &api.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", &missing);
  resolve(lib, &api.cuModuleLoadDataEx, "cuModuleLoadDataEx", nullptr, &missing);
  resolve(lib, &api.cuModuleUnload, "cuModuleUnload", nullptr, &missing);
  resolve(lib, &api.cuModuleGetFunction, "cuModuleGetFunction", nullptr, &missing);
  resolve(lib, &api.cuFuncGetAttribute, "cuFuncGetAttribute", nullptr, &missing);
  resolve(lib, &api.cuFuncSetAttribute, "cuFuncSetAttribute", nullptr, &missing);
  resolve(lib, &api.cuLaunchKernel, "cuLaunchKernel", nullptr, &missing);
  resolve(lib, &api.cuLaunchKernelEx, "cuLaunchKernelEx", nullptr, nullptr);
  resolve(lib, &api.cuFuncGetParamInfo, "cuFuncGetParamInfo", nullptr, nullptr);
  resolve(lib, &api.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", nullptr, nullptr);
  // CUDA graphs. No fallback to the unversioned cuStreamBeginCapture: that symbol is the CUDA 10.0
  // entry point, which takes no mode argument; any driver that lacks the _v2 one lacks
  // cuGraphInstantiateWithFlags too, so a fallback could never make graphs work.
  resolve(lib, &api.cuStreamBeginCapture, "cuStreamBeginCapture_v2", nullptr, nullptr);
  resolve(lib, &api.cuStreamEndCapture, "cuStreamEndCapture", nullptr, nullptr);
  resolve(lib, &api.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", nullptr, nullptr);
  resolve(lib, &api.cuGraphLaunch, "cuGraphLaunch", nullptr, nullptr);
  resolve(lib, &api.cuGraphExecDestroy, "cuGraphExecDestroy", nullptr, nullptr);
  resolve(lib, &api.cuGraphDestroy, "cuGraphDestroy", nullptr, nullptr);
  if (!missing.empty()) {
    api.error = api.path + " lacks required entry points (driver too old?): " + missing;
    return api;
  }
  api.loaded = true;
  api.initResult = api.cuInit(0);
  api.initialized = api.initResult == CUDA_SUCCESS;
  if (!api.initialized) {
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(api.initResult, &name);
    api.cuGetErrorString(api.initResult, &text);
    api.error = std::string("cuInit failed: ") + (name != nullptr ? name : "unknown error") + " (" +
                std::to_string(api.initResult) + "): " + (text != nullptr ? text : "");
  }
  return api;
}

NvrtcApi loadNvrtc() {
  NvrtcApi api;
  // Sonames first (ldconfig, LD_LIBRARY_PATH), then the toolkit's own lib64 (often not in ldconfig).
  std::vector<std::string> defaults = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  const char* homes[] = {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (const char* home : homes) {
    if (home == nullptr || *home == '\0') continue;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12"}) defaults.push_back(std::string(home) + "/lib64/" + name);
  }
  void* lib = openFirst(candidatesFrom("TILEKIT_NVRTC_PATH", defaults), &api.path, &api.error);
  if (lib == nullptr) {
    api.error = "cannot load NVRTC (libnvrtc.so.13 or .12, also under $CUDA_HOME/lib64): " + api.error;
    return api;
  }
  std::string missing;
  resolve(lib, &api.nvrtcGetErrorString, "nvrtcGetErrorString", nullptr, &missing);
  resolve(lib, &api.nvrtcVersion, "nvrtcVersion", nullptr, &missing);
  resolve(lib, &api.nvrtcCreateProgram, "nvrtcCreateProgram", nullptr, &missing);
  resolve(lib, &api.nvrtcDestroyProgram, "nvrtcDestroyProgram", nullptr, &missing);
  resolve(lib, &api.nvrtcCompileProgram, "nvrtcCompileProgram", nullptr, &missing);
  resolve(lib, &api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nullptr, &missing);
  resolve(lib, &api.nvrtcGetProgramLog, "nvrtcGetProgramLog", nullptr, &missing);
  resolve(lib, &api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nullptr, &missing);
  resolve(lib, &api.nvrtcGetCUBIN, "nvrtcGetCUBIN", nullptr, &missing);
  resolve(lib, &api.nvrtcGetPTXSize, "nvrtcGetPTXSize", nullptr, &missing);
  resolve(lib, &api.nvrtcGetPTX, "nvrtcGetPTX", nullptr, &missing);
  if (!missing.empty()) {
    api.error = api.path + " lacks required entry points: " + missing;
    return api;
  }
  if (api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS) {
    api.error = api.path + ": nvrtcVersion failed";
    return api;
  }
  api.loaded = true;
  return api;
}

}  // namespace

const DriverApi& driver() {
  static std::once_flag once;
  static DriverApi api;
  std::call_once(once, [] { api = loadDriver(); });
  return api;
}

const NvrtcApi& nvrtc() {
  static std::once_flag once;
  static NvrtcApi api;
  std::call_once(once, [] { api = loadNvrtc(); });
  return api;
}

std::string cudaErrorName(CUresult code) {
  const DriverApi& api = driver();
  const char* name = nullptr;
  if (api.cuGetErrorName != nullptr && api.cuGetErrorName(code, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUDA_ERROR_" + std::to_string(code);
}

std::string cudaErrorString(CUresult code) {
  const DriverApi& api = driver();
  const char* text = nullptr;
  if (api.cuGetErrorString != nullptr && api.cuGetErrorString(code, &text) == CUDA_SUCCESS && text != nullptr) {
    return text;
  }
  return "unknown CUDA error";
}

}  // namespace tk
