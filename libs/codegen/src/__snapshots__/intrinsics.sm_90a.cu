// tilekit intrinsic wrappers on sm_90a
// generated; do not edit

// The .shared state-space address of a generic pointer into shared memory (32 bits).
__device__ __forceinline__ unsigned int tk_smem_addr(const void* ptr) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(ptr));
}

// cp.async.cg.shared.global, 16 bytes; reads src_bytes (< 16: the rest is zero-filled; 0: nothing is read).
__device__ __forceinline__ void tk_cp_async_cg_16(void* dst, const void* src, unsigned int src_bytes) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned long long src_addr = __cvta_generic_to_global(src);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" : : "r"(dst_addr), "l"(src_addr), "r"(src_bytes) : "memory");
}

// cp.async.ca.shared.global, 16 bytes; reads src_bytes (< 16: the rest is zero-filled; 0: nothing is read).
__device__ __forceinline__ void tk_cp_async_ca_16(void* dst, const void* src, unsigned int src_bytes) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned long long src_addr = __cvta_generic_to_global(src);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" : : "r"(dst_addr), "l"(src_addr), "r"(src_bytes) : "memory");
}

// cp.async.ca.shared.global, 8 bytes; reads src_bytes (< 8: the rest is zero-filled; 0: nothing is read).
__device__ __forceinline__ void tk_cp_async_ca_8(void* dst, const void* src, unsigned int src_bytes) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned long long src_addr = __cvta_generic_to_global(src);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" : : "r"(dst_addr), "l"(src_addr), "r"(src_bytes) : "memory");
}

// cp.async.ca.shared.global, 4 bytes; reads src_bytes (< 4: the rest is zero-filled; 0: nothing is read).
__device__ __forceinline__ void tk_cp_async_ca_4(void* dst, const void* src, unsigned int src_bytes) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned long long src_addr = __cvta_generic_to_global(src);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" : : "r"(dst_addr), "l"(src_addr), "r"(src_bytes) : "memory");
}

// cp.async.commit_group: close the group of this thread's pending cp.async copies.
__device__ __forceinline__ void tk_cp_async_commit_group() {
  asm volatile("cp.async.commit_group;" : : : "memory");
}

// cp.async.wait_group N: wait until at most N of this thread's cp.async groups are pending.
template <int N>
__device__ __forceinline__ void tk_cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;" : : "n"(N) : "memory");
}

// ldmatrix.sync.aligned.m8n8.x1.shared.b16: 1 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x1(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(dst[0]) : "r"(addr) : "memory");
}

// The lane of this thread in its warp (PTX %laneid; correct for any block shape).
__device__ __forceinline__ unsigned int tk_lane_id() {
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16: 1 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x1_trans(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(dst[0]) : "r"(addr) : "memory");
}

// ldmatrix.sync.aligned.m8n8.x2.shared.b16: 2 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x2(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(dst[0]), "=r"(dst[1]) : "r"(addr) : "memory");
}

// ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16: 2 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x2_trans(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(dst[0]), "=r"(dst[1]) : "r"(addr) : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.shared.b16: 4 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x4(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(dst[0]), "=r"(dst[1]), "=r"(dst[2]), "=r"(dst[3]) : "r"(addr) : "memory");
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: 4 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).
__device__ __forceinline__ void tk_ldmatrix_x4_trans(unsigned int* dst, const void* src) {
  const unsigned int addr = tk_smem_addr(src);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(dst[0]), "=r"(dst[1]), "=r"(dst[2]), "=r"(dst[3]) : "r"(addr) : "memory");
}

// mbarrier.init.shared.b64: phase 0, `count` expected arrivals, tx-count 0.
__device__ __forceinline__ void tk_mbarrier_init(void* bar, unsigned int count) {
  const unsigned int addr = tk_smem_addr(bar);
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" : : "r"(addr), "r"(count) : "memory");
}

// mbarrier.arrive.shared.b64: one arrival (release, CTA scope); returns the phase state token.
__device__ __forceinline__ unsigned long long tk_mbarrier_arrive(void* bar) {
  const unsigned int addr = tk_smem_addr(bar);
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(addr) : "memory");
  return state;
}

// mbarrier.inval.shared.b64: end the object's life (before reusing its memory).
__device__ __forceinline__ void tk_mbarrier_inval(void* bar) {
  const unsigned int addr = tk_smem_addr(bar);
  asm volatile("mbarrier.inval.shared.b64 [%0];" : : "r"(addr) : "memory");
}

// lg2.approx.ftz.f32: log2(x) (+0 gives -inf).
__device__ __forceinline__ float tk_log2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// ex2.approx.ftz.f32: 2^x to 2 ulp (subnormals flushed; -inf gives +0).
__device__ __forceinline__ float tk_exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// cvt.rn.f16x2.f32: two floats rounded to nearest-even fp16, lo in bits 0-15, hi in 16-31.
__device__ __forceinline__ unsigned int tk_pack_f16x2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(d) : "f"(lo), "f"(hi));
  return d;
}

// cvt.rn.bf16x2.f32: two floats rounded to nearest-even bf16, lo in bits 0-15, hi in 16-31.
__device__ __forceinline__ unsigned int tk_pack_bf16x2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;" : "=r"(d) : "f"(lo), "f"(hi));
  return d;
}

// bar.arrive id, count: count this warp at barrier `id` without waiting.
__device__ __forceinline__ void tk_named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(count) : "memory");
}

// bar.sync id, count: wait until `count` threads (whole warps) reached barrier `id`.
__device__ __forceinline__ void tk_named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(count) : "memory");
}

// red.global.add.f32 [p], v: an atomic add whose result nobody reads (no return trip).
__device__ __forceinline__ void tk_red_add_f32(float* p, float v) {
  asm volatile("red.global.add.f32 [%0], %1;" : : "l"(p), "f"(v) : "memory");
}

// A CUtensorMap by value: 128 opaque bytes, 64-byte aligned (the driver encodes it; TMA reads it).
struct alignas(64) tk_tensor_map { unsigned long long opaque[16]; };

// griddepcontrol.wait: wait for the prerequisite grids to complete and their memory to be visible.
__device__ __forceinline__ void tk_griddepcontrol_wait() {
  asm volatile("griddepcontrol.wait;" : : : "memory");
}

// prefetch.tensormap: bring a tensor map (generic address of a param/const/global) into the cache.
__device__ __forceinline__ void tk_prefetch_tensormap(const void* map) {
  asm volatile("prefetch.tensormap [%0];" : : "l"(map) : "memory");
}

// fence.mbarrier_init.release.cluster: release prior mbarrier.init to the cluster (and the async proxy).
__device__ __forceinline__ void tk_fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
}

// elect.sync _|p, membermask: true on exactly one (the same) lane of the mask.
__device__ __forceinline__ bool tk_elect_sync(unsigned int mask) {
  unsigned int elected;
  asm volatile(
      "{\n"
      "  .reg .pred leader;\n"
      "  elect.sync _|leader, %1;\n"
      "  selp.u32 %0, 1, 0, leader;\n"
      "}\n"
      : "=r"(elected) : "r"(mask));
  return elected != 0u;
}

// mbarrier.arrive.expect_tx.shared::cta.b64: expect tx_bytes more transaction bytes, then arrive once.
__device__ __forceinline__ unsigned long long tk_mbarrier_arrive_expect_tx(void* bar, unsigned int tx_bytes) {
  const unsigned int addr = tk_smem_addr(bar);
  unsigned long long state;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(addr), "r"(tx_bytes) : "memory");
  return state;
}

// cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.
__device__ __forceinline__ void tk_tma_load_1d(void* dst, const void* map, void* bar, int c0) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned int bar_addr = tk_smem_addr(bar);
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" : : "r"(dst_addr), "l"(map), "r"(c0), "r"(bar_addr) : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.
__device__ __forceinline__ void tk_tma_load_2d(void* dst, const void* map, void* bar, int c0, int c1) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned int bar_addr = tk_smem_addr(bar);
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" : : "r"(dst_addr), "l"(map), "r"(c0), "r"(c1), "r"(bar_addr) : "memory");
}

// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.
__device__ __forceinline__ void tk_tma_load_3d(void* dst, const void* map, void* bar, int c0, int c1, int c2) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned int bar_addr = tk_smem_addr(bar);
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" : : "r"(dst_addr), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar_addr) : "memory");
}

// cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.
__device__ __forceinline__ void tk_tma_load_4d(void* dst, const void* map, void* bar, int c0, int c1, int c2, int c3) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned int bar_addr = tk_smem_addr(bar);
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" : : "r"(dst_addr), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar_addr) : "memory");
}

// cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: TMA box load completing on an mbarrier.
__device__ __forceinline__ void tk_tma_load_5d(void* dst, const void* map, void* bar, int c0, int c1, int c2, int c3, int c4) {
  const unsigned int dst_addr = tk_smem_addr(dst);
  const unsigned int bar_addr = tk_smem_addr(bar);
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" : : "r"(dst_addr), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar_addr) : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64: has the phase with this parity completed? (acquire, CTA scope; may suspend a while)
__device__ __forceinline__ bool tk_mbarrier_try_wait_parity(void* bar, unsigned int parity) {
  const unsigned int addr = tk_smem_addr(bar);
  unsigned int done;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done) : "r"(addr), "r"(parity) : "memory");
  return done != 0u;
}

// Spin on mbarrier.try_wait.parity until the phase with this parity has completed.
__device__ __forceinline__ void tk_mbarrier_wait_parity(void* bar, unsigned int parity) {
  while (!tk_mbarrier_try_wait_parity(bar, parity)) {
  }
}

// fence.proxy.async.shared::cta: order this thread's generic-proxy shared accesses with the async proxy (TMA, wgmma).
__device__ __forceinline__ void tk_fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
}

// cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_tma_store_1d(const void* map, const void* src, int c0) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" : : "l"(map), "r"(c0), "r"(src_addr) : "memory");
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_tma_store_2d(const void* map, const void* src, int c0, int c1) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" : : "l"(map), "r"(c0), "r"(c1), "r"(src_addr) : "memory");
}

// cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_tma_store_3d(const void* map, const void* src, int c0, int c1, int c2) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];" : : "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(src_addr) : "memory");
}

// cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_tma_store_4d(const void* map, const void* src, int c0, int c1, int c2, int c3) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" : : "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src_addr) : "memory");
}

// cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group: TMA box store, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_tma_store_5d(const void* map, const void* src, int c0, int c1, int c2, int c3, int c4) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" : : "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(src_addr) : "memory");
}

// cp.async.bulk.global.shared::cta.bulk_group: copies `bytes` from shared to global memory by the TMA unit, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_bulk_store(float* dst, const float* src, int bytes) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" : : "l"(dst), "r"(src_addr), "r"(bytes) : "memory");
}

// cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32: adds `bytes` of fp32 from shared memory into global memory in L2, tracked by cp.async.bulk groups.
__device__ __forceinline__ void tk_bulk_reduce_add_f32(float* dst, const float* src, int bytes) {
  const unsigned int src_addr = tk_smem_addr(src);
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" : : "l"(dst), "r"(src_addr), "r"(bytes) : "memory");
}

// cp.async.bulk.commit_group: close the group of this thread's pending bulk (TMA store) copies.
__device__ __forceinline__ void tk_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" : : : "memory");
}

// cp.async.bulk.wait_group.read N: wait until at most N bulk groups still read their sources.
template <int N>
__device__ __forceinline__ void tk_bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(N) : "memory");
}

// cp.async.bulk.wait_group N: wait until at most N bulk groups are pending (writes done).
template <int N>
__device__ __forceinline__ void tk_bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" : : "n"(N) : "memory");
}

// fence.proxy.async.global: order this thread's async-proxy (TMA) global accesses with its generic-proxy ones.
__device__ __forceinline__ void tk_fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" : : : "memory");
}

// red.release.gpu.global.add.s32: *p += v after every earlier memory access of this thread (release at GPU scope).
__device__ __forceinline__ void tk_red_release_gpu_add_s32(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

// ld.acquire.gpu.global.s32: what the writer released before its release add is visible after this load.
__device__ __forceinline__ int tk_ld_acquire_gpu_s32(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Spin (acquire loads at GPU scope) until *p >= value.
__device__ __forceinline__ void tk_wait_global_at_least(const int* p, int value) {
  while (tk_ld_acquire_gpu_s32(p) < value) {
  }
}

// red.global.add.v4.f32 [p], {x, y, z, w}: four adjacent floats added atomically (16-byte aligned), no return trip.
__device__ __forceinline__ void tk_red_add_v4_f32(float* p, float x, float y, float z, float w) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" : : "l"(p), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}

// griddepcontrol.launch_dependents: let the dependent grid be scheduled once every CTA signalled or exited.
__device__ __forceinline__ void tk_griddepcontrol_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" : : : "memory");
}

// setmaxnreg.inc.sync.aligned.u32 N: raise this warp's register budget to N (warpgroup-collective).
template <int N>
__device__ __forceinline__ void tk_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" : : "n"(N));
}

// setmaxnreg.dec.sync.aligned.u32 N: lower this warp's register budget to N (warpgroup-collective).
template <int N>
__device__ __forceinline__ void tk_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" : : "n"(N));
}

// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every non-exited thread of the cluster meets here.
__device__ __forceinline__ void tk_cluster_sync() {
  asm volatile(
      "{\n"
      "  barrier.cluster.arrive.release;\n"
      "  barrier.cluster.wait.acquire;\n"
      "}\n"
      : : : "memory");
}

// mov.u32 %cluster_ctarank: this CTA's rank in its cluster.
__device__ __forceinline__ unsigned int tk_cluster_ctarank() {
  unsigned int rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// mapa.shared::cluster.u32: the shared::cluster address of the same offset in CTA `rank` of the cluster.
__device__ __forceinline__ unsigned int tk_mapa_shared(void* ptr, unsigned int rank) {
  const unsigned int local = tk_smem_addr(ptr);
  unsigned int remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

// st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32: four floats to a peer CTA's shared memory, completing 16 bytes of transaction on the peer's mbarrier (release, cluster scope).
__device__ __forceinline__ void tk_st_async_v4_f32(unsigned int addr, unsigned int bar, float x, float y, float z, float w) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%2, %3, %4, %5}, [%1];" : : "r"(addr), "r"(bar), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}

// mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64: has the phase completed? (acquire at cluster scope: what arrivers of other CTAs released is visible)
__device__ __forceinline__ bool tk_mbarrier_try_wait_parity_cluster(void* bar, unsigned int parity) {
  const unsigned int addr = tk_smem_addr(bar);
  unsigned int done;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done) : "r"(addr), "r"(parity) : "memory");
  return done != 0u;
}

// Spin on mbarrier.try_wait.parity.acquire.cluster until the phase with this parity has completed.
__device__ __forceinline__ void tk_mbarrier_wait_parity_cluster(void* bar, unsigned int parity) {
  while (!tk_mbarrier_try_wait_parity_cluster(bar, parity)) {
  }
}

// Whole warp: bar.warp.sync (memory ordering among the lanes), then lane 0 arrives once on an mbarrier at a shared::cluster address (release, cluster scope).
__device__ __forceinline__ void tk_mbarrier_arrive_cluster_warp(unsigned int addr) {
  asm volatile(
      "{\n"
      "  .reg .pred is_lane0;\n"
      "  .reg .u32 lane;\n"
      "  mov.u32 lane, %%laneid;\n"
      "  bar.warp.sync 0xffffffff;\n"
      "  setp.eq.u32 is_lane0, lane, 0;\n"
      "  @is_lane0 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n"
      "}\n"
      : : "r"(addr) : "memory");
}

// st.shared::cluster.u32: one word into a cluster CTA's shared memory at a shared::cluster address (weak; order it with a cluster barrier).
__device__ __forceinline__ void tk_st_shared_cluster_u32(unsigned int addr, unsigned int value) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" : : "r"(addr), "r"(value) : "memory");
}

// ld.shared::cluster.u32: one word of a cluster CTA's shared memory at a shared::cluster address (weak; order it with a cluster barrier).
__device__ __forceinline__ unsigned int tk_ld_shared_cluster_u32(unsigned int addr) {
  unsigned int value;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

extern "C" __global__ void __launch_bounds__(128) tk_intrinsics_sm80(const unsigned char* __restrict__ in, unsigned int* __restrict__ out, int n) {
  alignas(128) __shared__ unsigned char tile[2048];
  alignas(8) __shared__ unsigned long long bar[1];
  const int tid = static_cast<int>(threadIdx.x);
  const int at = tid * 16;
  const unsigned int in_bounds = static_cast<unsigned int>(at < n);
  // every cp.async size and cache mode; the 16-byte copy zero-fills out of bounds
  tk_cp_async_cg_16(&tile[at], in + at, in_bounds * 16u);
  tk_cp_async_ca_16(&tile[at], in + at, 16u);
  tk_cp_async_ca_8(&tile[at], in + at, 8u);
  tk_cp_async_ca_4(&tile[at], in + at, 2u);
  tk_cp_async_commit_group();
  tk_cp_async_wait_group<1>();
  tk_cp_async_wait_group<0>();
  __syncthreads();
  unsigned int regs[4];
  tk_ldmatrix_x1(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  tk_ldmatrix_x1_trans(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  tk_ldmatrix_x2(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  tk_ldmatrix_x2_trans(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  tk_ldmatrix_x4(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  tk_ldmatrix_x4_trans(regs, &tile[static_cast<int>(tk_lane_id()) * 16]);
  if (tid == 0) {
    tk_mbarrier_init(bar, 1u);
    tk_mbarrier_arrive(bar);
    tk_mbarrier_inval(bar);
  }
  // fast-math exp2/log2, fp32 pairs packed to f16x2/bf16x2, named barriers
  const float x = static_cast<float>(regs[0]);
  const float e = tk_log2_approx(tk_exp2_approx(x));
  const unsigned int packed = tk_pack_f16x2(x, e) + tk_pack_bf16x2(e, x);
  tk_named_barrier_arrive(1, 64);
  tk_named_barrier_sync(2, 128);
  tk_red_add_f32(reinterpret_cast<float*>(out), e);
  const unsigned int sum = regs[0] + regs[1] + (regs[2] + regs[3]);
  out[tid] = sum + packed + tk_smem_addr(tile);
}

extern "C" __global__ void __launch_bounds__(128) tk_intrinsics_sm90(const __grid_constant__ tk_tensor_map map, unsigned int* __restrict__ out, int x) {
  alignas(128) __shared__ unsigned char box[4096];
  alignas(8) __shared__ unsigned long long bar[1];
  const int tid = static_cast<int>(threadIdx.x);
  tk_griddepcontrol_wait();
  if (tid == 0) {
    tk_prefetch_tensormap(&map);
    tk_mbarrier_init(bar, 1u);
    tk_fence_mbarrier_init();
  }
  __syncthreads();
  const bool leader = tk_elect_sync(0xffffffffu);
  if (leader) {
    if (tid >> 5 == 0) {
      tk_mbarrier_arrive_expect_tx(bar, 320u);
      tk_tma_load_1d(box, &map, bar, x);
      tk_tma_load_2d(box, &map, bar, x, 1);
      tk_tma_load_3d(box, &map, bar, x, 1, 2);
      tk_tma_load_4d(box, &map, bar, x, 1, 2, 3);
      tk_tma_load_5d(box, &map, bar, x, 1, 2, 3, 4);
    }
  }
  tk_mbarrier_wait_parity(bar, 0u);
  const unsigned int again = static_cast<unsigned int>(tk_mbarrier_try_wait_parity(bar, 0u));
  tk_fence_proxy_async_shared_cta();
  __syncthreads();
  if (tid == 0) {
    tk_tma_store_1d(&map, box, x);
    tk_tma_store_2d(&map, box, x, 0);
    tk_tma_store_3d(&map, box, x, 0, 0);
    tk_tma_store_4d(&map, box, x, 0, 0, 0);
    tk_tma_store_5d(&map, box, x, 0, 0, 0, 0);
    tk_bulk_store(reinterpret_cast<float*>(out), reinterpret_cast<const float*>(&box[0]), 256);
    tk_bulk_reduce_add_f32(reinterpret_cast<float*>(out), reinterpret_cast<const float*>(&box[0]), 256);
    tk_bulk_commit_group();
    tk_bulk_wait_group_read<1>();
    tk_bulk_wait_group<0>();
    tk_fence_proxy_async_global();
    tk_red_release_gpu_add_s32(reinterpret_cast<int*>(out), 1);
    tk_wait_global_at_least(reinterpret_cast<const int*>(out), 1);
    tk_mbarrier_inval(bar);
  }
  const float f = static_cast<float>(x);
  tk_red_add_v4_f32(reinterpret_cast<float*>(out), f, f, f, f);
  tk_griddepcontrol_launch_dependents();
  out[tid] = again + tk_smem_addr(box);
}

extern "C" __global__ void __launch_bounds__(256, 1) tk_intrinsics_setmaxnreg(unsigned int* __restrict__ out) {
  const int tid = static_cast<int>(threadIdx.x);
  if (tid >> 7 != 0) {
    tk_setmaxnreg_inc<232>();
    out[tid] = 1u;
  } else {
    tk_setmaxnreg_dec<40>();
    out[tid] = 2u;
  }
}

extern "C" __global__ void __launch_bounds__(128) tk_intrinsics_cluster(float* __restrict__ out) {
  alignas(16) __shared__ float buf[512];
  alignas(8) __shared__ unsigned long long bars[2];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    tk_mbarrier_init(bars, 1u);
    tk_mbarrier_init(&bars[1], 4u);
    tk_fence_mbarrier_init();
    tk_mbarrier_arrive_expect_tx(bars, 2048u);
  }
  tk_cluster_sync();
  const unsigned int peer = tk_cluster_ctarank() ^ 1u;
  const unsigned int remote = tk_mapa_shared(&buf[tid * 4], peer);
  const unsigned int remote_full = tk_mapa_shared(bars, peer);
  const float v = static_cast<float>(tid);
  tk_st_async_v4_f32(remote, remote_full, v, v, v, v);
  tk_mbarrier_wait_parity_cluster(bars, 0u);
  out[tid] = buf[tid * 4];
  tk_mbarrier_arrive_cluster_warp(tk_mapa_shared(&bars[1], peer));
  tk_mbarrier_wait_parity_cluster(&bars[1], 0u);
  // word stores into the peer's buffer, a cluster barrier, then word loads of the peer's
  const unsigned int word = tk_mapa_shared(&buf[tid], peer);
  tk_st_shared_cluster_u32(word, tid);
  tk_cluster_sync();
  out[tid + 128] = static_cast<float>(tk_ld_shared_cluster_u32(word));
  tk_cluster_sync();
}
