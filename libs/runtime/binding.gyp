# The tilekit CUDA addon. It links no CUDA library: libcuda.so.1 and NVRTC are dlopened at run
# time (src/native/driver.cc), so it builds on any machine with a C++17 compiler and Node headers.
{
  "targets": [
    {
      "target_name": "tilekit_runtime",
      "sources": [
        "src/native/addon.cc",
        "src/native/common.cc",
        "src/native/device.cc",
        "src/native/driver.cc",
        "src/native/graphs.cc",
        "src/native/memory.cc",
        "src/native/modules.cc",
        "src/native/nvrtcCompile.cc",
        "src/native/streams.cc"
      ],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-ldl"]
    }
  ]
}
