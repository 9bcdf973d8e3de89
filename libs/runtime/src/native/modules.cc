// Modules (cubin / fatbin / PTX images), kernel functions, launches and TMA descriptors.
#include <cstring>
#include <vector>

#include "common.h"

namespace tk {
namespace {

ModuleState* liveModule(const Napi::Value& value) {
  ModuleHandle* handle = unwrapHandle<ModuleHandle>(value, kModuleTag, "module");
  if (handle->state->module == nullptr) throw Napi::Error::New(value.Env(), "module was unloaded");
  return handle->state.get();
}

FunctionHandle* liveFunction(const Napi::Value& value) {
  FunctionHandle* handle = unwrapHandle<FunctionHandle>(value, kFunctionTag, "kernel function");
  if (handle->module->module == nullptr) {
    throw Napi::Error::New(value.Env(), "kernel " + handle->name + ": its module was unloaded");
  }
  return handle;
}

std::string trimmed(const std::vector<char>& log) {
  std::string text(log.data(), strnlen(log.data(), log.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// moduleLoad(ordinal, image: Uint8Array) -> module handle. The image is copied with zero padding:
// the driver sizes cubins from their ELF headers and PTX by its terminating NUL, so a damaged
// image must not make it read past the JS array.
Napi::Value ModuleLoad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  Napi::Uint8Array image = toBytes(info[1], "image");
  std::vector<unsigned char> copy(image.ByteLength() + 4096, 0);
  std::memcpy(copy.data(), image.Data(), image.ByteLength());
  CUcontext ctx = primaryContext(env, ordinal);
  makeCurrent(env, ctx);

  std::vector<char> errorLog(16384, 0);
  std::vector<char> infoLog(16384, 0);
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes};
  void* values[] = {errorLog.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(errorLog.size() - 1)),
                    infoLog.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(infoLog.size() - 1))};
  CUmodule module = nullptr;
  CUresult r = api.cuModuleLoadDataEx(&module, copy.data(), 4, options, values);
  if (r != CUDA_SUCCESS) {
    std::string detail = trimmed(errorLog);
    if (!detail.empty()) detail = "loader log:\n" + detail;
    throwCuda(env, "cuModuleLoadDataEx", r, detail);
  }
  auto state = std::make_shared<ModuleState>(ModuleState{ordinal, ctx, module});
  return wrapHandle(env, new ModuleHandle{state}, kModuleTag);
}

Napi::Value ModuleUnload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  ModuleHandle* handle = unwrapHandle<ModuleHandle>(info[0], kModuleTag, "module");
  if (handle->state->module == nullptr) return env.Undefined();
  makeCurrent(env, handle->state->ctx);
  CUmodule module = handle->state->module;
  handle->state->module = nullptr;
  check(env, api.cuModuleUnload(module), "cuModuleUnload");
  return env.Undefined();
}

// moduleGetFunction(module, name) -> function handle
Napi::Value ModuleGetFunction(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  ModuleHandle* handle = unwrapHandle<ModuleHandle>(info[0], kModuleTag, "module");
  liveModule(info[0]);
  if (!info[1].IsString()) throw Napi::TypeError::New(env, "name must be a string");
  const std::string name = info[1].As<Napi::String>().Utf8Value();
  makeCurrent(env, handle->state->ctx);
  CUfunction fn = nullptr;
  CUresult r = api.cuModuleGetFunction(&fn, handle->state->module, name.c_str());
  if (r != CUDA_SUCCESS) throwCuda(env, "cuModuleGetFunction", r, "kernel name: " + name);
  return wrapHandle(env, new FunctionHandle{handle->state, fn, name}, kFunctionTag);
}

Napi::Value FuncGetAttributes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  FunctionHandle* handle = liveFunction(info[0]);
  makeCurrent(env, handle->module->ctx);
  struct Entry {
    const char* key;
    int attr;
  };
  static const Entry entries[] = {
      {"maxThreadsPerBlock", kFuncMaxThreadsPerBlock},
      {"staticSharedBytes", kFuncSharedSizeBytes},
      {"constBytes", kFuncConstSizeBytes},
      {"localBytes", kFuncLocalSizeBytes},
      {"numRegs", kFuncNumRegs},
      {"ptxVersion", kFuncPtxVersion},
      {"binaryVersion", kFuncBinaryVersion},
      {"maxDynamicSharedBytes", kFuncMaxDynamicSharedSizeBytes},
  };
  Napi::Object out = Napi::Object::New(env);
  for (const Entry& e : entries) {
    int value = 0;
    check(env, api.cuFuncGetAttribute(&value, e.attr, handle->fn), "cuFuncGetAttribute");
    out.Set(e.key, Napi::Number::New(env, value));
  }
  return out;
}

// funcSetAttribute(fn, attribute, value)
Napi::Value FuncSetAttribute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  FunctionHandle* handle = liveFunction(info[0]);
  const int attr = toInt(info[1], "attribute");
  const int value = toInt(info[2], "value");
  makeCurrent(env, handle->module->ctx);
  check(env, api.cuFuncSetAttribute(handle->fn, attr, value), "cuFuncSetAttribute");
  return env.Undefined();
}

// funcGetParamInfo(fn) -> [{offset, size}] or null when the driver cannot tell (before 12.4).
Napi::Value FuncGetParamInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  FunctionHandle* handle = liveFunction(info[0]);
  if (api.cuFuncGetParamInfo == nullptr) return env.Null();
  makeCurrent(env, handle->module->ctx);
  Napi::Array out = Napi::Array::New(env);
  for (std::size_t i = 0; i < 4096; ++i) {
    std::size_t offset = 0;
    std::size_t size = 0;
    CUresult r = api.cuFuncGetParamInfo(handle->fn, i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (r != CUDA_SUCCESS) {
      if (i == 0 && r == CUDA_ERROR_NOT_SUPPORTED) return env.Null();
      throwCuda(env, "cuFuncGetParamInfo", r);
    }
    Napi::Object param = Napi::Object::New(env);
    param.Set("offset", Napi::Number::New(env, static_cast<double>(offset)));
    param.Set("size", Napi::Number::New(env, static_cast<double>(size)));
    out.Set(static_cast<uint32_t>(i), param);
  }
  return out;
}

void dim3(const Napi::Value& value, const char* what, unsigned int out[3]) {
  if (!value.IsArray() || value.As<Napi::Array>().Length() != 3) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be [x, y, z]");
  }
  Napi::Array array = value.As<Napi::Array>();
  for (uint32_t i = 0; i < 3; ++i) {
    const std::int64_t v = toI64Number(array.Get(i), what);
    if (v < 0 || v > 0xffffffffLL) throw Napi::RangeError::New(value.Env(), std::string(what) + " out of range");
    out[i] = static_cast<unsigned int>(v);
  }
}

// launchKernel(fn, grid[3], block[3], sharedBytes, stream?, cluster[3]?, params: Uint8Array, offsets: number[])
// Parameters travel as kernelParams: one pointer per parameter into the packed buffer. The
// driver copies each value (sized from the kernel's metadata) before the call returns.
Napi::Value LaunchKernel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  FunctionHandle* handle = liveFunction(info[0]);
  unsigned int grid[3];
  unsigned int block[3];
  dim3(info[1], "grid", grid);
  dim3(info[2], "block", block);
  const std::int64_t shared = toI64Number(info[3], "sharedBytes");
  if (shared < 0 || shared > 0x7fffffffLL) throw Napi::RangeError::New(env, "sharedBytes out of range");
  CUstream stream = optionalStream(info[4], handle->module->ordinal);
  const bool clustered = !(info[5].IsUndefined() || info[5].IsNull());
  unsigned int cluster[3] = {1, 1, 1};
  if (clustered) dim3(info[5], "cluster", cluster);
  Napi::Uint8Array params = toBytes(info[6], "params");
  if (!info[7].IsArray()) throw Napi::TypeError::New(env, "offsets must be an array");
  Napi::Array offsets = info[7].As<Napi::Array>();
  std::vector<void*> pointers(offsets.Length());
  auto* base = static_cast<unsigned char*>(params.Data());
  for (uint32_t i = 0; i < offsets.Length(); ++i) {
    const std::int64_t offset = toI64Number(offsets.Get(i), "offset");
    if (offset < 0 || static_cast<std::size_t>(offset) >= params.ByteLength()) {
      throw Napi::RangeError::New(env, "parameter offset " + std::to_string(i) + " is outside the packed buffer");
    }
    pointers[i] = base + offset;
  }
  void** kernelParams = pointers.empty() ? nullptr : pointers.data();
  makeCurrent(env, handle->module->ctx);

  if (api.cuLaunchKernelEx != nullptr) {
    LaunchAttribute attribute;
    std::memset(&attribute, 0, sizeof(attribute));
    attribute.id = kLaunchAttributeClusterDimension;
    attribute.value.clusterDim.x = cluster[0];
    attribute.value.clusterDim.y = cluster[1];
    attribute.value.clusterDim.z = cluster[2];
    LaunchConfig config;
    std::memset(&config, 0, sizeof(config));
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = block[0];
    config.blockDimY = block[1];
    config.blockDimZ = block[2];
    config.sharedMemBytes = static_cast<unsigned int>(shared);
    config.hStream = stream;
    config.attrs = clustered ? &attribute : nullptr;
    config.numAttrs = clustered ? 1 : 0;
    CUresult r = api.cuLaunchKernelEx(&config, handle->fn, kernelParams, nullptr);
    if (r != CUDA_SUCCESS) throwCuda(env, "cuLaunchKernelEx", r, "kernel: " + handle->name);
    return env.Undefined();
  }
  if (clustered) {
    throwCuda(env, "cuLaunchKernelEx", CUDA_ERROR_NOT_SUPPORTED,
              "this driver has no cuLaunchKernelEx, so cluster launches are impossible");
  }
  CUresult r = api.cuLaunchKernel(handle->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                  static_cast<unsigned int>(shared), stream, kernelParams, nullptr);
  if (r != CUDA_SUCCESS) throwCuda(env, "cuLaunchKernel", r, "kernel: " + handle->name);
  return env.Undefined();
}

template <typename T>
std::vector<T> numbers(const Napi::Value& value, const char* what) {
  if (!value.IsArray()) throw Napi::TypeError::New(value.Env(), std::string(what) + " must be an array");
  Napi::Array array = value.As<Napi::Array>();
  std::vector<T> out(array.Length());
  for (uint32_t i = 0; i < array.Length(); ++i) out[i] = static_cast<T>(toU64(array.Get(i), what));
  return out;
}

// tensorMapEncodeTiled(ordinal, dtype, rank, address, globalDims[], globalStrides[], boxDims[],
//                      elementStrides[], interleave, swizzle, l2Promotion, oobFill) -> Uint8Array(128)
Napi::Value TensorMapEncodeTiled(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const int dtype = toInt(info[1], "dtype");
  const int rank = toInt(info[2], "rank");
  const std::uint64_t address = toU64(info[3], "address");
  auto dims = numbers<std::uint64_t>(info[4], "globalDims");
  auto strides = numbers<std::uint64_t>(info[5], "globalStrides");
  auto box = numbers<std::uint32_t>(info[6], "boxDims");
  auto elementStrides = numbers<std::uint32_t>(info[7], "elementStrides");
  const int interleave = toInt(info[8], "interleave");
  const int swizzle = toInt(info[9], "swizzle");
  const int l2 = toInt(info[10], "l2Promotion");
  const int oob = toInt(info[11], "oobFill");
  if (rank < 1 || rank > 5 || dims.size() != static_cast<std::size_t>(rank) ||
      strides.size() != static_cast<std::size_t>(rank - 1) || box.size() != static_cast<std::size_t>(rank) ||
      elementStrides.size() != static_cast<std::size_t>(rank)) {
    throw Napi::RangeError::New(env, "tensor map arrays do not match the rank");
  }
  if (api.cuTensorMapEncodeTiled == nullptr) {
    throwCuda(env, "cuTensorMapEncodeTiled", CUDA_ERROR_NOT_SUPPORTED, "this driver has no cuTensorMapEncodeTiled");
  }
  makeCurrent(env, primaryContext(env, ordinal));
  TensorMap map;
  std::memset(&map, 0, sizeof(map));
  // globalStrides may be empty for rank 1; pass a valid pointer anyway.
  std::uint64_t noStride = 0;
  CUresult r = api.cuTensorMapEncodeTiled(&map, dtype, static_cast<std::uint32_t>(rank),
                                          reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), dims.data(),
                                          strides.empty() ? &noStride : strides.data(), box.data(),
                                          elementStrides.data(), interleave, swizzle, l2, oob);
  if (r != CUDA_SUCCESS) throwCuda(env, "cuTensorMapEncodeTiled", r);
  Napi::Uint8Array out = Napi::Uint8Array::New(env, sizeof(map));
  std::memcpy(out.Data(), &map, sizeof(map));
  return out;
}

}  // namespace

void registerModules(Napi::Env env, Napi::Object exports) {
  exports.Set("moduleLoad", Napi::Function::New(env, ModuleLoad, "moduleLoad"));
  exports.Set("moduleUnload", Napi::Function::New(env, ModuleUnload, "moduleUnload"));
  exports.Set("moduleGetFunction", Napi::Function::New(env, ModuleGetFunction, "moduleGetFunction"));
  exports.Set("funcGetAttributes", Napi::Function::New(env, FuncGetAttributes, "funcGetAttributes"));
  exports.Set("funcSetAttribute", Napi::Function::New(env, FuncSetAttribute, "funcSetAttribute"));
  exports.Set("funcGetParamInfo", Napi::Function::New(env, FuncGetParamInfo, "funcGetParamInfo"));
  exports.Set("launchKernel", Napi::Function::New(env, LaunchKernel, "launchKernel"));
  exports.Set("tensorMapEncodeTiled", Napi::Function::New(env, TensorMapEncodeTiled, "tensorMapEncodeTiled"));
}

}  // namespace tk
