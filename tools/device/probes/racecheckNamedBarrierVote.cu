// Probe (run on the GPU machine under `compute-sanitizer --tool racecheck`): does racecheck order a
// shared-memory write before `bar.arrive` with a read after the `bar.sync` of the same named
// barrier? This is the exchange of the Sparge warp vote (libs/fmha/src/pipeline/fmhaFwdPvSkipVote.ts):
// lane 0 of each of 4 warps writes its vote to a slot; warps that vote "keep" arrive on the barrier
// and go on, warps that vote "skip" sync on it and read every slot. The PTX memory model says
// bar.arrive synchronizes with bar.sync on the same barrier, so any report here is the tool's.
//   Kernel `mixed`: votes alternate per round (both kinds of warp every round), as in the kernel.
//   Kernel `allSync`: the same exchange with every warp on bar.sync (the control: no report expected).
//   nvcc -arch=sm_90a -o probe racecheckNamedBarrierVote.cu && for i in 1 2 3 4 5; do compute-sanitizer --tool racecheck ./probe; done
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kRounds = 3;
constexpr int kIters = 64;

__device__ __forceinline__ void barArrive(int id, int count) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory"); }
__device__ __forceinline__ void barSync(int id, int count) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory"); }

template <bool AllSync>
__global__ void vote(int* out) {
  __shared__ int slots[kRounds * 4];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  int seen = 0;
  for (int it = 0; it < kIters; ++it) {
    const int round = it % kRounds;
    const bool keep = ((warp + it) & 1) != 0;
    if (lane == 0) slots[round * 4 + warp] = keep ? 1 : 0;
    if (keep && !AllSync) {
      barArrive(1 + round, 128);
    } else {
      barSync(1 + round, 128);
      seen += slots[round * 4] + slots[round * 4 + 1] + slots[round * 4 + 2] + slots[round * 4 + 3];
    }
    // The kernel's rounds are ordered by its K/V ring; here a block-wide barrier every round does it.
    __syncthreads();
  }
  if (lane == 0) out[blockIdx.x * 4 + warp] = seen;
}

int main() {
  int* out = nullptr;
  cudaMalloc(&out, 8 * 4 * sizeof(int));
  vote<false><<<8, 128>>>(out);
  vote<true><<<8, 128>>>(out);
  const cudaError_t err = cudaDeviceSynchronize();
  int host[32];
  cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
  std::printf("racecheck named-barrier vote probe: %s; warp 0 of block 0 saw %d keep votes\n", cudaGetErrorString(err), host[0]);
  cudaFree(out);
  return err == cudaSuccess ? 0 : 1;
}
