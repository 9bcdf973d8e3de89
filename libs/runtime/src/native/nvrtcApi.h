// The NVRTC entry points the addon uses, declared by hand (NVRTC is optional and dlopened).
#pragma once

#include <cstddef>

namespace tk {

using nvrtcResult = int;
using nvrtcProgram = struct nvrtc_program_opaque*;

constexpr nvrtcResult NVRTC_SUCCESS = 0;
constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;

using PFN_nvrtcGetErrorString = const char* (*)(nvrtcResult);
using PFN_nvrtcVersion = nvrtcResult (*)(int*, int*);
using PFN_nvrtcCreateProgram = nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                               const char* const*);
using PFN_nvrtcDestroyProgram = nvrtcResult (*)(nvrtcProgram*);
using PFN_nvrtcCompileProgram = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
using PFN_nvrtcGetSize = nvrtcResult (*)(nvrtcProgram, std::size_t*);
using PFN_nvrtcGetBytes = nvrtcResult (*)(nvrtcProgram, char*);

}  // namespace tk
