// NVRTC compilation, run on a libuv worker so that the JS thread stays free. A compile error is
// not an exception here: the promise resolves with ok=false and the log, and TS raises
// CompileError with the source path it wrote.
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace tk {
namespace {

Napi::Value NvrtcInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const NvrtcApi& api = nvrtc();
  Napi::Object out = Napi::Object::New(env);
  out.Set("loaded", api.loaded);
  if (api.loaded) {
    out.Set("path", api.path);
    out.Set("major", api.major);
    out.Set("minor", api.minor);
  } else {
    out.Set("reason", api.error);
  }
  return out;
}

class NvrtcWorker : public Napi::AsyncWorker {
 public:
  NvrtcWorker(Napi::Env env, std::string source, std::string name, std::vector<std::string> options)
      : Napi::AsyncWorker(env, "tilekit:nvrtcCompile"),
        deferred_(Napi::Promise::Deferred::New(env)),
        source_(std::move(source)),
        name_(std::move(name)),
        options_(std::move(options)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    const NvrtcApi& api = nvrtc();
    nvrtcProgram program = nullptr;
    result_ = api.nvrtcCreateProgram(&program, source_.c_str(), name_.c_str(), 0, nullptr, nullptr);
    if (result_ != NVRTC_SUCCESS) {
      stage_ = "nvrtcCreateProgram";
      return;
    }
    std::vector<const char*> argv;
    argv.reserve(options_.size());
    for (const auto& option : options_) argv.push_back(option.c_str());
    result_ = api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
    stage_ = "nvrtcCompileProgram";
    std::size_t size = 0;
    if (api.nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1) {
      std::vector<char> buffer(size, 0);
      if (api.nvrtcGetProgramLog(program, buffer.data()) == NVRTC_SUCCESS) log_.assign(buffer.data());
    }
    if (result_ == NVRTC_SUCCESS) {
      if (api.nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS && size > 0) {
        cubin_.resize(size);
        if (api.nvrtcGetCUBIN(program, cubin_.data()) != NVRTC_SUCCESS) cubin_.clear();
      }
      if (api.nvrtcGetPTXSize(program, &size) == NVRTC_SUCCESS && size > 1) {
        std::vector<char> buffer(size, 0);
        if (api.nvrtcGetPTX(program, buffer.data()) == NVRTC_SUCCESS) ptx_.assign(buffer.data());
      }
    }
    api.nvrtcDestroyProgram(&program);
  }

  void OnOK() override {
    Napi::Env env = Env();
    const NvrtcApi& api = nvrtc();
    Napi::Object out = Napi::Object::New(env);
    out.Set("ok", result_ == NVRTC_SUCCESS);
    out.Set("result", result_);
    const char* text = api.nvrtcGetErrorString(result_);
    out.Set("resultName", text != nullptr ? text : "NVRTC_ERROR_UNKNOWN");
    out.Set("stage", stage_);
    out.Set("log", log_);
    if (!cubin_.empty()) {
      Napi::Uint8Array bytes = Napi::Uint8Array::New(env, cubin_.size());
      std::memcpy(bytes.Data(), cubin_.data(), cubin_.size());
      out.Set("cubin", bytes);
    }
    if (!ptx_.empty()) out.Set("ptx", ptx_);
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string source_;
  std::string name_;
  std::vector<std::string> options_;
  nvrtcResult result_ = NVRTC_SUCCESS;
  std::string stage_ = "nvrtcCompileProgram";
  std::string log_;
  std::vector<char> cubin_;
  std::string ptx_;
};

// nvrtcCompile(source, fileName, options[]) -> Promise<{ ok, result, resultName, log, cubin?, ptx? }>
Napi::Value NvrtcCompile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const NvrtcApi& api = nvrtc();
  if (!api.loaded) throw Napi::Error::New(env, "NVRTC is not available: " + api.error);
  if (!info[0].IsString() || !info[1].IsString() || !info[2].IsArray()) {
    throw Napi::TypeError::New(env, "nvrtcCompile(source: string, fileName: string, options: string[])");
  }
  Napi::Array array = info[2].As<Napi::Array>();
  std::vector<std::string> options;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    Napi::Value option = array.Get(i);
    if (!option.IsString()) throw Napi::TypeError::New(env, "options must be strings");
    options.push_back(option.As<Napi::String>().Utf8Value());
  }
  auto* worker = new NvrtcWorker(env, info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::String>().Utf8Value(),
                                 std::move(options));
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

void registerNvrtc(Napi::Env env, Napi::Object exports) {
  exports.Set("nvrtcInfo", Napi::Function::New(env, NvrtcInfo, "nvrtcInfo"));
  exports.Set("nvrtcCompile", Napi::Function::New(env, NvrtcCompile, "nvrtcCompile"));
}

}  // namespace tk
