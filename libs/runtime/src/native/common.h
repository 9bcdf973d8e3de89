// Shared pieces of the bindings: CudaError construction, primary contexts, typed handles and
// argument unwrapping. Every binding runs on the JS thread unless it says otherwise.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "driver.h"

namespace tk {

// Per-environment state: the JS factory that builds CudaError objects (set once from TS).
struct InstanceData {
  Napi::FunctionReference errorFactory;
};

// Builds a CudaError (through the TS factory when registered, else a plain Error carrying the
// same fields). `call` names the driver entry point, `detail` adds loader logs and the like.
Napi::Value makeCudaError(Napi::Env env, const std::string& call, CUresult code, const std::string& detail = "");

// Throws makeCudaError(...) as a JS exception.
[[noreturn]] void throwCuda(Napi::Env env, const std::string& call, CUresult code, const std::string& detail = "");

inline void check(Napi::Env env, CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) throwCuda(env, call, result);
}

// The driver table, or a thrown CudaError when the driver is absent or cuInit failed.
const DriverApi& requireDriver(Napi::Env env);

// The primary context of device `ordinal`, retained on first use and kept for the process.
CUcontext primaryContext(Napi::Env env, int ordinal);

// Makes `ctx` current on the calling thread if it is not already (cheap when it is).
CUresult makeCurrent(CUcontext ctx);
void makeCurrent(Napi::Env env, CUcontext ctx);

// Handles carried to JS as type-tagged Externals. Freeing the CUDA object is explicit (TS
// dispose or its FinalizationRegistry); the External's finalizer frees only this struct.
struct StreamHandle {
  int ordinal;
  CUcontext ctx;
  CUstream stream;
};
struct EventHandle {
  int ordinal;
  CUcontext ctx;
  CUevent event;
};
struct GraphHandle {
  int ordinal;
  CUcontext ctx;
  CUgraphExec exec;  // null once destroyed
};
struct ModuleState {
  int ordinal;
  CUcontext ctx;
  CUmodule module;  // null once unloaded
};
struct ModuleHandle {
  std::shared_ptr<ModuleState> state;
};
struct FunctionHandle {
  std::shared_ptr<ModuleState> module;  // keeps the unload flag visible to launches
  CUfunction fn;
  std::string name;
};

extern const napi_type_tag kStreamTag;
extern const napi_type_tag kEventTag;
extern const napi_type_tag kModuleTag;
extern const napi_type_tag kFunctionTag;
extern const napi_type_tag kGraphTag;

template <typename T>
Napi::External<T> wrapHandle(Napi::Env env, T* handle, const napi_type_tag& tag) {
  auto external = Napi::External<T>::New(env, handle, [](Napi::Env, T* data) { delete data; });
  external.TypeTag(&tag);
  return external;
}

template <typename T>
T* unwrapHandle(const Napi::Value& value, const napi_type_tag& tag, const char* what) {
  if (!value.IsExternal()) throw Napi::TypeError::New(value.Env(), std::string("expected a ") + what + " handle");
  auto external = value.As<Napi::External<T>>();
  if (!external.CheckTypeTag(&tag)) throw Napi::TypeError::New(value.Env(), std::string("expected a ") + what + " handle");
  return external.Data();
}

// A stream argument that must be a live (not destroyed) stream handle.
StreamHandle* liveStream(const Napi::Value& value);

// Optional stream argument: undefined/null means the legacy default stream of the context.
CUstream optionalStream(const Napi::Value& value, int ordinal);

std::uint64_t toU64(const Napi::Value& value, const char* what);
std::int64_t toI64Number(const Napi::Value& value, const char* what);
int toInt(const Napi::Value& value, const char* what);
Napi::Uint8Array toBytes(const Napi::Value& value, const char* what);

void registerDevice(Napi::Env env, Napi::Object exports);
void registerMemory(Napi::Env env, Napi::Object exports);
void registerStreams(Napi::Env env, Napi::Object exports);
void registerGraphs(Napi::Env env, Napi::Object exports);
void registerModules(Napi::Env env, Napi::Object exports);
void registerNvrtc(Napi::Env env, Napi::Object exports);

}  // namespace tk
