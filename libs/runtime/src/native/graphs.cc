// CUDA graphs: capture the work queued on a stream into a graph, instantiate it once, replay it
// with one launch. The entry points are optional (driver.cc): a driver without them loads and
// probes as usual, and only these bindings fail, naming what is missing.
#include <string>

#include "common.h"

namespace tk {
namespace {

// The driver table with every graph entry point present, else a thrown CudaError
// (CUDA_ERROR_NOT_SUPPORTED) whose detail lists the missing symbols.
const DriverApi& requireGraphApi(Napi::Env env, const char* call) {
  const DriverApi& api = requireDriver(env);
  std::string missing;
  auto need = [&missing](bool present, const char* symbol) {
    if (present) return;
    if (!missing.empty()) missing += ", ";
    missing += symbol;
  };
  need(api.cuStreamBeginCapture != nullptr, "cuStreamBeginCapture_v2");
  need(api.cuStreamEndCapture != nullptr, "cuStreamEndCapture");
  need(api.cuGraphInstantiateWithFlags != nullptr, "cuGraphInstantiateWithFlags");
  need(api.cuGraphLaunch != nullptr, "cuGraphLaunch");
  need(api.cuGraphExecDestroy != nullptr, "cuGraphExecDestroy");
  need(api.cuGraphDestroy != nullptr, "cuGraphDestroy");
  if (!missing.empty()) {
    throwCuda(env, call, CUDA_ERROR_NOT_SUPPORTED,
              api.path + " lacks the CUDA graph entry points " + missing + " (driver too old for CUDA graphs?)");
  }
  return api;
}

GraphHandle* liveGraph(const Napi::Value& value) {
  GraphHandle* handle = unwrapHandle<GraphHandle>(value, kGraphTag, "graph");
  if (handle->exec == nullptr) throw Napi::Error::New(value.Env(), "graph was destroyed");
  return handle;
}

// streamBeginCapture(stream, mode): mode is a CUstreamCaptureMode value.
Napi::Value StreamBeginCapture(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireGraphApi(env, "cuStreamBeginCapture_v2");
  StreamHandle* handle = liveStream(info[0]);
  const int mode = toInt(info[1], "mode");
  if (mode != kStreamCaptureModeGlobal && mode != kStreamCaptureModeThreadLocal && mode != kStreamCaptureModeRelaxed) {
    throw Napi::RangeError::New(env, "mode must be 0 (global), 1 (thread-local) or 2 (relaxed)");
  }
  makeCurrent(env, handle->ctx);
  check(env, api.cuStreamBeginCapture(handle->stream, mode), "cuStreamBeginCapture_v2");
  return env.Undefined();
}

// streamEndCapture(stream) -> graph: ends the capture, instantiates what was captured (flags 0)
// and keeps only the executable graph. A failed capture (invalidated, unjoined work, ...) throws
// what cuStreamEndCapture returned; the capture has ended either way.
Napi::Value StreamEndCapture(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireGraphApi(env, "cuStreamEndCapture");
  StreamHandle* handle = liveStream(info[0]);
  makeCurrent(env, handle->ctx);
  CUgraph graph = nullptr;
  CUresult r = api.cuStreamEndCapture(handle->stream, &graph);
  if (r != CUDA_SUCCESS) {
    if (graph != nullptr) api.cuGraphDestroy(graph);
    throwCuda(env, "cuStreamEndCapture", r);
  }
  CUgraphExec exec = nullptr;
  r = api.cuGraphInstantiateWithFlags(&exec, graph, 0);
  // The executable graph does not refer to the graph it was made from.
  CUresult destroyed = api.cuGraphDestroy(graph);
  if (r != CUDA_SUCCESS) throwCuda(env, "cuGraphInstantiateWithFlags", r);
  if (destroyed != CUDA_SUCCESS) {
    api.cuGraphExecDestroy(exec);
    throwCuda(env, "cuGraphDestroy", destroyed);
  }
  return wrapHandle(env, new GraphHandle{handle->ordinal, handle->ctx, exec}, kGraphTag);
}

// graphLaunch(graph, stream)
Napi::Value GraphLaunch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireGraphApi(env, "cuGraphLaunch");
  GraphHandle* handle = liveGraph(info[0]);
  StreamHandle* stream = liveStream(info[1]);
  if (stream->ordinal != handle->ordinal) throw Napi::Error::New(env, "stream belongs to another device");
  makeCurrent(env, handle->ctx);
  check(env, api.cuGraphLaunch(handle->exec, stream->stream), "cuGraphLaunch");
  return env.Undefined();
}

// graphDestroy(graph): idempotent, like streamDestroy.
Napi::Value GraphDestroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GraphHandle* handle = unwrapHandle<GraphHandle>(info[0], kGraphTag, "graph");
  if (handle->exec == nullptr) return env.Undefined();
  const DriverApi& api = requireGraphApi(env, "cuGraphExecDestroy");
  makeCurrent(env, handle->ctx);
  CUgraphExec exec = handle->exec;
  handle->exec = nullptr;
  check(env, api.cuGraphExecDestroy(exec), "cuGraphExecDestroy");
  return env.Undefined();
}

}  // namespace

void registerGraphs(Napi::Env env, Napi::Object exports) {
  exports.Set("streamBeginCapture", Napi::Function::New(env, StreamBeginCapture, "streamBeginCapture"));
  exports.Set("streamEndCapture", Napi::Function::New(env, StreamEndCapture, "streamEndCapture"));
  exports.Set("graphLaunch", Napi::Function::New(env, GraphLaunch, "graphLaunch"));
  exports.Set("graphDestroy", Napi::Function::New(env, GraphDestroy, "graphDestroy"));
}

}  // namespace tk
