// Device queries and whole-context operations.
#include "common.h"

namespace tk {
namespace {

int attribute(Napi::Env env, const DriverApi& api, CUdevice device, int attr) {
  int value = 0;
  check(env, api.cuDeviceGetAttribute(&value, attr, device), "cuDeviceGetAttribute");
  return value;
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  const DriverApi& api = requireDriver(info.Env());
  int count = 0;
  check(info.Env(), api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  return Napi::Number::New(info.Env(), count);
}

Napi::Value DriverVersion(const Napi::CallbackInfo& info) {
  const DriverApi& api = requireDriver(info.Env());
  int version = 0;
  check(info.Env(), api.cuDriverGetVersion(&version), "cuDriverGetVersion");
  return Napi::Number::New(info.Env(), version);
}

Napi::Value DeviceInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  CUdevice device = 0;
  check(env, api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  char name[256] = {0};
  check(env, api.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  std::size_t total = 0;
  check(env, api.cuDeviceTotalMem(&total, device), "cuDeviceTotalMem_v2");
  Napi::Object out = Napi::Object::New(env);
  out.Set("name", Napi::String::New(env, name));
  out.Set("totalMemoryBytes", Napi::Number::New(env, static_cast<double>(total)));
  struct Entry {
    const char* key;
    int attr;
  };
  static const Entry entries[] = {
      {"major", kComputeCapabilityMajor},
      {"minor", kComputeCapabilityMinor},
      {"multiprocessorCount", kMultiprocessorCount},
      {"maxThreadsPerBlock", kMaxThreadsPerBlock},
      {"maxBlockDimX", kMaxBlockDimX},
      {"maxBlockDimY", kMaxBlockDimY},
      {"maxBlockDimZ", kMaxBlockDimZ},
      {"maxGridDimX", kMaxGridDimX},
      {"maxGridDimY", kMaxGridDimY},
      {"maxGridDimZ", kMaxGridDimZ},
      {"sharedMemoryPerBlock", kMaxSharedMemoryPerBlock},
      {"sharedMemoryPerBlockOptin", kMaxSharedMemoryPerBlockOptin},
      {"sharedMemoryPerMultiprocessor", kMaxSharedMemoryPerMultiprocessor},
      {"reservedSharedMemoryPerBlock", kReservedSharedMemoryPerBlock},
      {"totalConstantMemory", kTotalConstantMemory},
      {"warpSize", kWarpSize},
      {"registersPerBlock", kMaxRegistersPerBlock},
      {"registersPerMultiprocessor", kMaxRegistersPerMultiprocessor},
      {"maxThreadsPerMultiprocessor", kMaxThreadsPerMultiprocessor},
      {"l2CacheBytes", kL2CacheSize},
      {"clockRateKHz", kClockRate},
      {"memoryClockRateKHz", kMemoryClockRate},
      {"memoryBusWidthBits", kGlobalMemoryBusWidth},
      {"pciBusId", kPciBusId},
      {"pciDeviceId", kPciDeviceId},
      {"clusterLaunch", kClusterLaunch},
  };
  for (const Entry& e : entries) out.Set(e.key, Napi::Number::New(env, attribute(env, api, device, e.attr)));
  return out;
}

Napi::Value MemGetInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  makeCurrent(env, primaryContext(env, toInt(info[0], "ordinal")));
  std::size_t free = 0;
  std::size_t total = 0;
  check(env, api.cuMemGetInfo(&free, &total), "cuMemGetInfo_v2");
  Napi::Object out = Napi::Object::New(env);
  out.Set("free", Napi::Number::New(env, static_cast<double>(free)));
  out.Set("total", Napi::Number::New(env, static_cast<double>(total)));
  return out;
}

Napi::Value ContextSynchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  makeCurrent(env, primaryContext(env, toInt(info[0], "ordinal")));
  check(env, api.cuCtxSynchronize(), "cuCtxSynchronize");
  return env.Undefined();
}

// True when the calling (JS) thread's current context is the primary context of `ordinal`.
Napi::Value IsContextCurrent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  CUcontext ctx = primaryContext(env, toInt(info[0], "ordinal"));
  CUcontext current = nullptr;
  check(env, api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  return Napi::Boolean::New(env, current == ctx);
}

// Clears the calling thread's current context (tests use it to prove calls restore it).
Napi::Value ClearCurrentContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  check(env, api.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
  return env.Undefined();
}

}  // namespace

void registerDevice(Napi::Env env, Napi::Object exports) {
  exports.Set("deviceCount", Napi::Function::New(env, DeviceCount, "deviceCount"));
  exports.Set("driverVersion", Napi::Function::New(env, DriverVersion, "driverVersion"));
  exports.Set("deviceInfo", Napi::Function::New(env, DeviceInfo, "deviceInfo"));
  exports.Set("memGetInfo", Napi::Function::New(env, MemGetInfo, "memGetInfo"));
  exports.Set("contextSynchronize", Napi::Function::New(env, ContextSynchronize, "contextSynchronize"));
  exports.Set("isContextCurrent", Napi::Function::New(env, IsContextCurrent, "isContextCurrent"));
  exports.Set("clearCurrentContext", Napi::Function::New(env, ClearCurrentContext, "clearCurrentContext"));
}

}  // namespace tk
