// Device memory: allocation and copies. Sizes and ranges are validated in TS before these run;
// the checks here only guard against reading past a host array.
#include "common.h"

namespace tk {
namespace {

Napi::Value MemAlloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const std::uint64_t bytes = toU64(info[1], "bytes");
  makeCurrent(env, primaryContext(env, ordinal));
  CUdeviceptr ptr = 0;
  check(env, api.cuMemAlloc(&ptr, static_cast<std::size_t>(bytes)), "cuMemAlloc_v2");
  return Napi::BigInt::New(env, static_cast<std::uint64_t>(ptr));
}

Napi::Value MemFree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const std::uint64_t ptr = toU64(info[1], "ptr");
  makeCurrent(env, primaryContext(env, ordinal));
  check(env, api.cuMemFree(static_cast<CUdeviceptr>(ptr)), "cuMemFree_v2");
  return env.Undefined();
}

// memcpyHtoD(ordinal, dst, src: Uint8Array, stream?)
Napi::Value MemcpyHtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const std::uint64_t dst = toU64(info[1], "dst");
  Napi::Uint8Array src = toBytes(info[2], "src");
  CUstream stream = optionalStream(info[3], ordinal);
  if (src.ByteLength() == 0) return env.Undefined();
  makeCurrent(env, primaryContext(env, ordinal));
  if (stream == nullptr) {
    check(env, api.cuMemcpyHtoD(dst, src.Data(), src.ByteLength()), "cuMemcpyHtoD_v2");
  } else {
    // From pageable memory the driver stages the data before returning, so `src` may be
    // released as soon as this returns.
    check(env, api.cuMemcpyHtoDAsync(dst, src.Data(), src.ByteLength(), stream), "cuMemcpyHtoDAsync_v2");
  }
  return env.Undefined();
}

// memcpyDtoH(ordinal, dst: Uint8Array, src, stream?) — returns once the bytes are in `dst`.
Napi::Value MemcpyDtoH(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  Napi::Uint8Array dst = toBytes(info[1], "dst");
  const std::uint64_t src = toU64(info[2], "src");
  CUstream stream = optionalStream(info[3], ordinal);
  if (dst.ByteLength() == 0) return env.Undefined();
  makeCurrent(env, primaryContext(env, ordinal));
  if (stream == nullptr) {
    check(env, api.cuMemcpyDtoH(dst.Data(), src, dst.ByteLength()), "cuMemcpyDtoH_v2");
  } else {
    check(env, api.cuMemcpyDtoHAsync(dst.Data(), src, dst.ByteLength(), stream), "cuMemcpyDtoHAsync_v2");
    // Pageable destinations make the copy synchronous already; pinned ones would not be, and
    // JS must not see the array before the bytes land.
    check(env, api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  return env.Undefined();
}

// memcpyDtoD(ordinal, dst, src, bytes, stream?)
Napi::Value MemcpyDtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const std::uint64_t dst = toU64(info[1], "dst");
  const std::uint64_t src = toU64(info[2], "src");
  const std::uint64_t bytes = toU64(info[3], "bytes");
  CUstream stream = optionalStream(info[4], ordinal);
  if (bytes == 0) return env.Undefined();
  makeCurrent(env, primaryContext(env, ordinal));
  if (stream == nullptr) {
    check(env, api.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD_v2");
  } else {
    check(env, api.cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync_v2");
  }
  return env.Undefined();
}

// memsetD8(ordinal, dst, value, bytes, stream?)
Napi::Value MemsetD8(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const std::uint64_t dst = toU64(info[1], "dst");
  const int value = toInt(info[2], "value");
  const std::uint64_t bytes = toU64(info[3], "bytes");
  CUstream stream = optionalStream(info[4], ordinal);
  if (bytes == 0) return env.Undefined();
  makeCurrent(env, primaryContext(env, ordinal));
  const auto byte = static_cast<unsigned char>(value & 0xff);
  if (stream == nullptr) {
    check(env, api.cuMemsetD8(dst, byte, bytes), "cuMemsetD8_v2");
  } else {
    check(env, api.cuMemsetD8Async(dst, byte, bytes, stream), "cuMemsetD8Async");
  }
  return env.Undefined();
}

}  // namespace

void registerMemory(Napi::Env env, Napi::Object exports) {
  exports.Set("memAlloc", Napi::Function::New(env, MemAlloc, "memAlloc"));
  exports.Set("memFree", Napi::Function::New(env, MemFree, "memFree"));
  exports.Set("memcpyHtoD", Napi::Function::New(env, MemcpyHtoD, "memcpyHtoD"));
  exports.Set("memcpyDtoH", Napi::Function::New(env, MemcpyDtoH, "memcpyDtoH"));
  exports.Set("memcpyDtoD", Napi::Function::New(env, MemcpyDtoD, "memcpyDtoD"));
  exports.Set("memsetD8", Napi::Function::New(env, MemsetD8, "memsetD8"));
}

}  // namespace tk
