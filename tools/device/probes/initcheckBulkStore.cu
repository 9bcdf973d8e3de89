// Probe (run on the GPU machine under `compute-sanitizer --tool initcheck`): does initcheck count a
// TMA bulk store (cp.async.bulk.global.shared::cta) as initializing global memory? Kernel `bulk`
// writes 4 KiB of fresh cudaMalloc memory with one bulk store, kernel `plain` writes another 4 KiB
// with st.global; kernel `reader` then reads both. A finding on the bulk half only means the tool
// does not track bulk stores (so findings behind them are the tool's, not the kernel's).
//   nvcc -arch=sm_90a -o probe initcheckBulkStore.cu && compute-sanitizer --tool initcheck ./probe
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kFloats = 1024;

__global__ void bulk(float* dst) {
  __shared__ alignas(128) float tile[kFloats];
  for (int i = threadIdx.x; i < kFloats; i += blockDim.x) tile[i] = float(i);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned src = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(kFloats * 4) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

__global__ void plain(float* dst) {
  for (int i = threadIdx.x; i < kFloats; i += blockDim.x) dst[i] = float(i);
}

__global__ void reader(const float* src, float* sum, int n) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += src[i];
  atomicAdd(sum, s);
}

int main() {
  float *a, *b, *sum;
  cudaMalloc(&a, kFloats * 4);
  cudaMalloc(&b, kFloats * 4);
  cudaMalloc(&sum, 8);
  cudaMemset(sum, 0, 8);
  bulk<<<1, 128>>>(a);
  plain<<<1, 128>>>(b);
  reader<<<1, 128>>>(b, sum, kFloats);      // plain-written: expected clean
  reader<<<1, 128>>>(a, sum + 1, kFloats);  // bulk-written: a finding here is the tool's limit
  float host[2];
  cudaMemcpy(host, sum, 8, cudaMemcpyDeviceToHost);
  std::printf("plain sum %.0f, bulk sum %.0f (both should be %d)\n", host[0], host[1], kFloats * (kFloats - 1) / 2);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
