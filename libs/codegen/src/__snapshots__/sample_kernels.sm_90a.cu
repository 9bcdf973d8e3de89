// tilekit codegen sample kernels for sm_90a
// generated; do not edit

#include <cuda_fp16.h>

// The lane of this thread in its warp (PTX %laneid; correct for any block shape).
__device__ __forceinline__ unsigned int tk_lane_id() {
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ float tk_warp_sum(float v) {
  float acc = v;
  #pragma unroll
  for (int k = 0; k < 5; ++k) {
    acc += __shfl_xor_sync(0xffffffffu, acc, 1 << k);
  }
  return acc;
}

extern "C" __global__ void __launch_bounds__(256) tk_block_sum(const __half* __restrict__ in, float* __restrict__ out, unsigned long long* __restrict__ ballots, int n) {
  // 8 warps of 32 lanes; one partial sum per warp in shared memory
  alignas(16) __shared__ float partial[8];
  const int tid = static_cast<int>(threadIdx.x);
  const int i = static_cast<int>(blockIdx.x) * 256 + tid;
  const float v = i < n ? static_cast<float>(in[i]) : 0.0f;
  const float sum = tk_warp_sum(v);
  const int lane = static_cast<int>(tk_lane_id());
  const int warp = tid >> 5;
  const unsigned int vote = __ballot_sync(0xffffffffu, i < n);
  if (lane == 0) {
    partial[warp] = sum;
    ballots[static_cast<int>(blockIdx.x) * 8 + warp] = static_cast<unsigned long long>(vote);
  }
  __syncthreads();
  if (tid == 0) {
    float total = 0.0f;
    #pragma unroll
    for (int j = 0; j < 8; ++j) {
      total += partial[j];
    }
    out[blockIdx.x] = total;
  } else {
    // other threads are done
  }
  if (n < 1) {
    return;
  }
}

extern "C" __global__ void tk_spellings(int* __restrict__ out, float* __restrict__ f, long long* __restrict__ wide) {
  const int t = static_cast<int>(threadIdx.x) + static_cast<int>(threadIdx.y) * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.z) * static_cast<int>(blockDim.x) * static_cast<int>(blockDim.y);
  const int blk = static_cast<int>(blockIdx.y) + static_cast<int>(blockIdx.z) * static_cast<int>(gridDim.y);
  const int lane = static_cast<int>(tk_lane_id());
  float v = f[t];
  v = __shfl_sync(0xffffffffu, v, 0) + __shfl_down_sync(0xffffffffu, v, 1u);
  v += __shfl_up_sync(0xffffffffu, v, 1u, 16);
  const int iv = __shfl_sync(0xffffffffu, t, lane ^ 1, 32);
  const long long wv = __shfl_xor_sync(0xffffffffu, wide[t], 2);
  wide[t] = wv + static_cast<long long>(gridDim.x);
  const int votes = static_cast<int>(__any_sync(0xffffffffu, v < 0.0f) != 0) + static_cast<int>(__all_sync(0xffffffffu, iv == t) != 0);
  out[t] = votes + blk * 32 + static_cast<int>(v);
}
