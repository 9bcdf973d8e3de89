// Module entry. Loading the addon touches no CUDA library: probe() and the first device call
// do the dlopen (driver.cc). probe() catches everything so that it never throws.
#include <string>

#include "common.h"

namespace tk {
namespace {

Napi::Value Probe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("driver", false);
  out.Set("deviceCount", 0);
  out.Set("nvrtc", false);
  try {
    const DriverApi& api = driver();
    std::string reason;
    if (api.loaded) {
      out.Set("libcuda", api.path);
      int version = 0;
      if (api.cuDriverGetVersion(&version) == CUDA_SUCCESS) out.Set("driverVersion", version);
      if (api.initialized) {
        out.Set("driver", true);
        int count = 0;
        CUresult r = api.cuDeviceGetCount(&count);
        if (r == CUDA_SUCCESS) {
          out.Set("deviceCount", count);
          if (count == 0) reason = "the CUDA driver reports no devices";
        } else {
          reason = "cuDeviceGetCount failed: " + cudaErrorName(r);
        }
      } else {
        reason = api.error;
      }
    } else {
      reason = api.error;
    }
    const NvrtcApi& rtc = nvrtc();
    if (rtc.loaded) {
      out.Set("nvrtc", true);
      out.Set("nvrtcVersion", std::to_string(rtc.major) + "." + std::to_string(rtc.minor));
      out.Set("libnvrtc", rtc.path);
    } else {
      out.Set("nvrtcReason", rtc.error);
    }
    if (!reason.empty()) out.Set("reason", reason);
  } catch (const std::exception& e) {
    out.Set("reason", std::string("probe failed: ") + e.what());
  } catch (...) {
    out.Set("reason", "probe failed with an unknown exception");
  }
  return out;
}

Napi::Value SetErrorFactory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsFunction()) throw Napi::TypeError::New(env, "setErrorFactory expects a function");
  auto* data = env.GetInstanceData<InstanceData>();
  data->errorFactory = Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

}  // namespace
}  // namespace tk

static Napi::Object InitTilekit(Napi::Env env, Napi::Object exports) {
  using namespace tk;
  env.SetInstanceData<InstanceData>(new InstanceData());
  exports.Set("probe", Napi::Function::New(env, Probe, "probe"));
  exports.Set("setErrorFactory", Napi::Function::New(env, SetErrorFactory, "setErrorFactory"));
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  registerDevice(env, exports);
  registerMemory(env, exports);
  registerStreams(env, exports);
  registerGraphs(env, exports);
  registerModules(env, exports);
  registerNvrtc(env, exports);
  return exports;
}

NODE_API_MODULE(tilekit_runtime, InitTilekit)
