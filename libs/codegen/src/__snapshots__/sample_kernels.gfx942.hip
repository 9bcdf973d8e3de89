// tilekit codegen sample kernels for gfx942
// generated; do not edit

// Self-contained HIP: compiled with clang -x hip -nogpuinc (no HIP headers), so the CUDA-style
// keywords come from clang attributes here (HIP headers define the same macros; hence #ifndef).
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif

// The lane of this thread in its wavefront: the number of lower lanes (mbcnt over all 64).
__device__ inline __attribute__((always_inline)) unsigned int tk_lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

// Wavefront shuffles with CUDA __shfl*_sync semantics (width-lane segments; lanes outside the
// segment read their own value), built on ds_bpermute (32 bits at a time).
template <typename T>
__device__ inline __attribute__((always_inline)) T tk_bpermute(T v, int src_lane) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "tk_bpermute: 32- or 64-bit values only");
  if constexpr (sizeof(T) == 4) {
    return __builtin_bit_cast(T, __builtin_amdgcn_ds_bpermute(src_lane << 2, __builtin_bit_cast(int, v)));
  } else {
    struct halves { int lo; int hi; };
    halves h = __builtin_bit_cast(halves, v);
    h.lo = __builtin_amdgcn_ds_bpermute(src_lane << 2, h.lo);
    h.hi = __builtin_amdgcn_ds_bpermute(src_lane << 2, h.hi);
    return __builtin_bit_cast(T, h);
  }
}
template <typename T>
__device__ inline __attribute__((always_inline)) T tk_shfl(T v, int src_lane, int width) {
  const int self = static_cast<int>(tk_lane_id());
  return tk_bpermute(v, (src_lane & (width - 1)) + (self & ~(width - 1)));
}
template <typename T>
__device__ inline __attribute__((always_inline)) T tk_shfl_xor(T v, int lane_mask, int width) {
  const int self = static_cast<int>(tk_lane_id());
  int src = self ^ lane_mask;
  if (src >= ((self + width) & ~(width - 1))) src = self;
  return tk_bpermute(v, src);
}
template <typename T>
__device__ inline __attribute__((always_inline)) T tk_shfl_down(T v, unsigned int delta, int width) {
  const int self = static_cast<int>(tk_lane_id());
  int src = self + static_cast<int>(delta);
  if ((self & (width - 1)) + static_cast<int>(delta) >= width) src = self;
  return tk_bpermute(v, src);
}
template <typename T>
__device__ inline __attribute__((always_inline)) T tk_shfl_up(T v, unsigned int delta, int width) {
  const int self = static_cast<int>(tk_lane_id());
  int src = self - static_cast<int>(delta);
  if (src < (self & ~(width - 1))) src = self;
  return tk_bpermute(v, src);
}

// __syncthreads(): workgroup barrier with release/acquire fences around it (as HIP does).
__device__ inline __attribute__((always_inline)) void tk_syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// gridDim: the grid size in work-items over the workgroup size (the dispatch packet has both).
__device__ inline __attribute__((always_inline)) unsigned int tk_grid_dim_x() {
  const unsigned int wg = __builtin_amdgcn_workgroup_size_x();
  return (__builtin_amdgcn_grid_size_x() + wg - 1u) / wg;
}
__device__ inline __attribute__((always_inline)) unsigned int tk_grid_dim_y() {
  const unsigned int wg = __builtin_amdgcn_workgroup_size_y();
  return (__builtin_amdgcn_grid_size_y() + wg - 1u) / wg;
}
__device__ inline __attribute__((always_inline)) unsigned int tk_grid_dim_z() {
  const unsigned int wg = __builtin_amdgcn_workgroup_size_z();
  return (__builtin_amdgcn_grid_size_z() + wg - 1u) / wg;
}

// Wavefront votes: a ballot of all 64 lanes; the ballot of `true` is the mask of active lanes.
__device__ inline __attribute__((always_inline)) bool tk_any(bool p) { return __builtin_amdgcn_ballot_w64(p) != 0ull; }
__device__ inline __attribute__((always_inline)) bool tk_all(bool p) { return __builtin_amdgcn_ballot_w64(p) == __builtin_amdgcn_ballot_w64(true); }

__device__ inline __attribute__((always_inline)) float tk_warp_sum(float v) {
  float acc = v;
  #pragma unroll
  for (int k = 0; k < 6; ++k) {
    acc += tk_shfl_xor(acc, 1 << k, 64);
  }
  return acc;
}

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(1, 256))) tk_block_sum(const _Float16* __restrict__ in, float* __restrict__ out, unsigned long long* __restrict__ ballots, int n) {
  // 4 warps of 64 lanes; one partial sum per warp in shared memory
  alignas(16) __shared__ float partial[4];
  const int tid = static_cast<int>(__builtin_amdgcn_workitem_id_x());
  const int i = static_cast<int>(__builtin_amdgcn_workgroup_id_x()) * 256 + tid;
  const float v = i < n ? static_cast<float>(in[i]) : 0.0f;
  const float sum = tk_warp_sum(v);
  const int lane = static_cast<int>(tk_lane_id());
  const int warp = tid >> 6;
  const unsigned long long vote = __builtin_amdgcn_ballot_w64(i < n);
  if (lane == 0) {
    partial[warp] = sum;
    ballots[static_cast<int>(__builtin_amdgcn_workgroup_id_x()) * 4 + warp] = vote;
  }
  tk_syncthreads();
  if (tid == 0) {
    float total = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      total += partial[j];
    }
    out[__builtin_amdgcn_workgroup_id_x()] = total;
  } else {
    // other threads are done
  }
  if (n < 1) {
    return;
  }
}

extern "C" __global__ void tk_spellings(int* __restrict__ out, float* __restrict__ f, long long* __restrict__ wide) {
  const int t = static_cast<int>(__builtin_amdgcn_workitem_id_x()) + static_cast<int>(__builtin_amdgcn_workitem_id_y()) * static_cast<int>(__builtin_amdgcn_workgroup_size_x()) + static_cast<int>(__builtin_amdgcn_workitem_id_z()) * static_cast<int>(__builtin_amdgcn_workgroup_size_x()) * static_cast<int>(__builtin_amdgcn_workgroup_size_y());
  const int blk = static_cast<int>(__builtin_amdgcn_workgroup_id_y()) + static_cast<int>(__builtin_amdgcn_workgroup_id_z()) * static_cast<int>(tk_grid_dim_y());
  const int lane = static_cast<int>(tk_lane_id());
  float v = f[t];
  v = tk_shfl(v, 0, 64) + tk_shfl_down(v, 1u, 64);
  v += tk_shfl_up(v, 1u, 16);
  const int iv = tk_shfl(t, lane ^ 1, 64);
  const long long wv = tk_shfl_xor(wide[t], 2, 64);
  wide[t] = wv + static_cast<long long>(tk_grid_dim_x());
  const int votes = static_cast<int>(tk_any(v < 0.0f)) + static_cast<int>(tk_all(iv == t));
  out[t] = votes + blk * 64 + static_cast<int>(v);
}
