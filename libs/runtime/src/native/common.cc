#include "common.h"

#include <mutex>
#include <vector>

namespace tk {

const napi_type_tag kStreamTag = {0x7a1e6b17c0de0001ULL, 0x9d3f44a1b2c30001ULL};
const napi_type_tag kEventTag = {0x7a1e6b17c0de0002ULL, 0x9d3f44a1b2c30002ULL};
const napi_type_tag kModuleTag = {0x7a1e6b17c0de0003ULL, 0x9d3f44a1b2c30003ULL};
const napi_type_tag kFunctionTag = {0x7a1e6b17c0de0004ULL, 0x9d3f44a1b2c30004ULL};
const napi_type_tag kGraphTag = {0x7a1e6b17c0de0005ULL, 0x9d3f44a1b2c30005ULL};

Napi::Value makeCudaError(Napi::Env env, const std::string& call, CUresult code, const std::string& detail) {
  const std::string name = cudaErrorName(code);
  const std::string text = cudaErrorString(code);
  auto* data = env.GetInstanceData<InstanceData>();
  if (data != nullptr && !data->errorFactory.IsEmpty()) {
    return data->errorFactory.Call({Napi::String::New(env, call), Napi::Number::New(env, code),
                                    Napi::String::New(env, name), Napi::String::New(env, text),
                                    Napi::String::New(env, detail)});
  }
  std::string message = call + " failed: " + name + " (" + std::to_string(code) + "): " + text;
  if (!detail.empty()) message += "\n" + detail;
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("call", call);
  error.Set("cudaCode", Napi::Number::New(env, code));
  error.Set("cudaName", name);
  return error.Value();
}

void throwCuda(Napi::Env env, const std::string& call, CUresult code, const std::string& detail) {
  throw Napi::Error(env, makeCudaError(env, call, code, detail));
}

const DriverApi& requireDriver(Napi::Env env) {
  const DriverApi& api = driver();
  if (!api.loaded) throwCuda(env, "dlopen(libcuda.so.1)", 3 /* CUDA_ERROR_NOT_INITIALIZED */, api.error);
  if (!api.initialized) throwCuda(env, "cuInit", api.initResult, api.error);
  return api;
}

CUcontext primaryContext(Napi::Env env, int ordinal) {
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;
  const DriverApi& api = requireDriver(env);
  std::lock_guard<std::mutex> lock(mutex);
  if (ordinal < 0) throw Napi::RangeError::New(env, "device ordinal must be >= 0");
  if (static_cast<std::size_t>(ordinal) < contexts.size() && contexts[ordinal] != nullptr) return contexts[ordinal];
  CUdevice device = 0;
  check(env, api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(env, api.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
  if (contexts.size() <= static_cast<std::size_t>(ordinal)) contexts.resize(ordinal + 1, nullptr);
  contexts[ordinal] = ctx;
  return ctx;
}

CUresult makeCurrent(CUcontext ctx) {
  const DriverApi& api = driver();
  CUcontext current = nullptr;
  CUresult result = api.cuCtxGetCurrent(&current);
  if (result != CUDA_SUCCESS) return result;
  if (current == ctx) return CUDA_SUCCESS;
  return api.cuCtxSetCurrent(ctx);
}

void makeCurrent(Napi::Env env, CUcontext ctx) { check(env, makeCurrent(ctx), "cuCtxSetCurrent"); }

StreamHandle* liveStream(const Napi::Value& value) {
  StreamHandle* handle = unwrapHandle<StreamHandle>(value, kStreamTag, "stream");
  if (handle->stream == nullptr) throw Napi::Error::New(value.Env(), "stream was destroyed");
  return handle;
}

CUstream optionalStream(const Napi::Value& value, int ordinal) {
  if (value.IsUndefined() || value.IsNull()) return nullptr;
  StreamHandle* handle = unwrapHandle<StreamHandle>(value, kStreamTag, "stream");
  if (handle->stream == nullptr) throw Napi::Error::New(value.Env(), "stream was destroyed");
  if (handle->ordinal != ordinal) throw Napi::Error::New(value.Env(), "stream belongs to another device");
  return handle->stream;
}

std::uint64_t toU64(const Napi::Value& value, const char* what) {
  if (value.IsBigInt()) {
    bool lossless = false;
    std::uint64_t v = value.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::RangeError::New(value.Env(), std::string(what) + " does not fit in 64 bits");
    return v;
  }
  if (value.IsNumber()) {
    double d = value.As<Napi::Number>().DoubleValue();
    if (d < 0 || d > 9007199254740991.0 || d != static_cast<double>(static_cast<std::uint64_t>(d))) {
      throw Napi::RangeError::New(value.Env(), std::string(what) + " must be a non-negative safe integer");
    }
    return static_cast<std::uint64_t>(d);
  }
  throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a bigint or number");
}

std::int64_t toI64Number(const Napi::Value& value, const char* what) {
  if (!value.IsNumber()) throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a number");
  return value.As<Napi::Number>().Int64Value();
}

int toInt(const Napi::Value& value, const char* what) {
  if (!value.IsNumber()) throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a number");
  return value.As<Napi::Number>().Int32Value();
}

Napi::Uint8Array toBytes(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a Uint8Array");
  }
  return value.As<Napi::Uint8Array>();
}

}  // namespace tk
