// Streams and events. Waiting for a stream can be done off the JS thread (a libuv worker),
// which first makes the stream's context current on that thread: contexts are per thread.
#include "common.h"

namespace tk {
namespace {

EventHandle* liveEvent(const Napi::Value& value) {
  EventHandle* handle = unwrapHandle<EventHandle>(value, kEventTag, "event");
  if (handle->event == nullptr) throw Napi::Error::New(value.Env(), "event was destroyed");
  return handle;
}

// streamCreate(ordinal, nonBlocking)
Napi::Value StreamCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const bool nonBlocking = info[1].ToBoolean().Value();
  CUcontext ctx = primaryContext(env, ordinal);
  makeCurrent(env, ctx);
  CUstream stream = nullptr;
  check(env, api.cuStreamCreate(&stream, nonBlocking ? 1u : 0u), "cuStreamCreate");
  return wrapHandle(env, new StreamHandle{ordinal, ctx, stream}, kStreamTag);
}

Napi::Value StreamDestroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  StreamHandle* handle = unwrapHandle<StreamHandle>(info[0], kStreamTag, "stream");
  if (handle->stream == nullptr) return env.Undefined();
  makeCurrent(env, handle->ctx);
  CUstream stream = handle->stream;
  handle->stream = nullptr;
  check(env, api.cuStreamDestroy(stream), "cuStreamDestroy_v2");
  return env.Undefined();
}

Napi::Value StreamSynchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  StreamHandle* handle = liveStream(info[0]);
  makeCurrent(env, handle->ctx);
  check(env, api.cuStreamSynchronize(handle->stream), "cuStreamSynchronize");
  return env.Undefined();
}

Napi::Value StreamQuery(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  StreamHandle* handle = liveStream(info[0]);
  makeCurrent(env, handle->ctx);
  CUresult r = api.cuStreamQuery(handle->stream);
  if (r == CUDA_ERROR_NOT_READY) return Napi::Boolean::New(env, false);
  check(env, r, "cuStreamQuery");
  return Napi::Boolean::New(env, true);
}

class StreamSyncWorker : public Napi::AsyncWorker {
 public:
  StreamSyncWorker(Napi::Env env, CUcontext ctx, CUstream stream)
      : Napi::AsyncWorker(env, "tilekit:streamSynchronize"),
        deferred_(Napi::Promise::Deferred::New(env)),
        ctx_(ctx),
        stream_(stream) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    result_ = makeCurrent(ctx_);
    if (result_ != CUDA_SUCCESS) {
      call_ = "cuCtxSetCurrent";
      return;
    }
    call_ = "cuStreamSynchronize";
    result_ = driver().cuStreamSynchronize(stream_);
  }

  void OnOK() override {
    if (result_ == CUDA_SUCCESS) {
      deferred_.Resolve(Env().Undefined());
    } else {
      deferred_.Reject(makeCudaError(Env(), call_, result_));
    }
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  CUcontext ctx_;
  CUstream stream_;
  CUresult result_ = CUDA_SUCCESS;
  const char* call_ = "cuStreamSynchronize";
};

Napi::Value StreamSynchronizeAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  requireDriver(env);
  StreamHandle* handle = liveStream(info[0]);
  auto* worker = new StreamSyncWorker(env, handle->ctx, handle->stream);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

// eventCreate(ordinal, flags)
Napi::Value EventCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  const int ordinal = toInt(info[0], "ordinal");
  const int flags = toInt(info[1], "flags");
  CUcontext ctx = primaryContext(env, ordinal);
  makeCurrent(env, ctx);
  CUevent event = nullptr;
  check(env, api.cuEventCreate(&event, static_cast<unsigned int>(flags)), "cuEventCreate");
  return wrapHandle(env, new EventHandle{ordinal, ctx, event}, kEventTag);
}

Napi::Value EventDestroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  EventHandle* handle = unwrapHandle<EventHandle>(info[0], kEventTag, "event");
  if (handle->event == nullptr) return env.Undefined();
  makeCurrent(env, handle->ctx);
  CUevent event = handle->event;
  handle->event = nullptr;
  check(env, api.cuEventDestroy(event), "cuEventDestroy_v2");
  return env.Undefined();
}

// eventRecord(event, stream?)
Napi::Value EventRecord(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  EventHandle* handle = liveEvent(info[0]);
  CUstream stream = optionalStream(info[1], handle->ordinal);
  makeCurrent(env, handle->ctx);
  check(env, api.cuEventRecord(handle->event, stream), "cuEventRecord");
  return env.Undefined();
}

Napi::Value EventSynchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  EventHandle* handle = liveEvent(info[0]);
  makeCurrent(env, handle->ctx);
  check(env, api.cuEventSynchronize(handle->event), "cuEventSynchronize");
  return env.Undefined();
}

Napi::Value EventQuery(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  EventHandle* handle = liveEvent(info[0]);
  makeCurrent(env, handle->ctx);
  CUresult r = api.cuEventQuery(handle->event);
  if (r == CUDA_ERROR_NOT_READY) return Napi::Boolean::New(env, false);
  check(env, r, "cuEventQuery");
  return Napi::Boolean::New(env, true);
}

// eventElapsedTime(start, end) -> milliseconds
Napi::Value EventElapsedTime(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DriverApi& api = requireDriver(env);
  EventHandle* start = liveEvent(info[0]);
  EventHandle* end = liveEvent(info[1]);
  makeCurrent(env, start->ctx);
  float ms = 0.0f;
  check(env, api.cuEventElapsedTime(&ms, start->event, end->event), "cuEventElapsedTime");
  return Napi::Number::New(env, ms);
}

}  // namespace

void registerStreams(Napi::Env env, Napi::Object exports) {
  exports.Set("streamCreate", Napi::Function::New(env, StreamCreate, "streamCreate"));
  exports.Set("streamDestroy", Napi::Function::New(env, StreamDestroy, "streamDestroy"));
  exports.Set("streamSynchronize", Napi::Function::New(env, StreamSynchronize, "streamSynchronize"));
  exports.Set("streamSynchronizeAsync", Napi::Function::New(env, StreamSynchronizeAsync, "streamSynchronizeAsync"));
  exports.Set("streamQuery", Napi::Function::New(env, StreamQuery, "streamQuery"));
  exports.Set("eventCreate", Napi::Function::New(env, EventCreate, "eventCreate"));
  exports.Set("eventDestroy", Napi::Function::New(env, EventDestroy, "eventDestroy"));
  exports.Set("eventRecord", Napi::Function::New(env, EventRecord, "eventRecord"));
  exports.Set("eventSynchronize", Napi::Function::New(env, EventSynchronize, "eventSynchronize"));
  exports.Set("eventQuery", Napi::Function::New(env, EventQuery, "eventQuery"));
  exports.Set("eventElapsedTime", Napi::Function::New(env, EventElapsedTime, "eventElapsedTime"));
}

}  // namespace tk
