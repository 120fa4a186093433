#ifndef GG_DEV_CLUSTER_CUH
#define GG_DEV_CLUSTER_CUH
// Thread-block clusters: identity of this CTA in its cluster, the cluster-wide
// barrier, and mapping a shared address into another CTA's shared memory.
namespace gg::dev {

static __device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

static __device__ __forceinline__ unsigned cluster_num_ctas() {
  unsigned count;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(count));
  return count;
}

// Which cluster of the grid this CTA belongs to, per dimension.
static __device__ __forceinline__ unsigned cluster_id_x() {
  unsigned id;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(id));
  return id;
}

static __device__ __forceinline__ unsigned cluster_id_y() {
  unsigned id;
  asm volatile("mov.u32 %0, %%clusterid.y;\n" : "=r"(id));
  return id;
}

static __device__ __forceinline__ unsigned cluster_id_z() {
  unsigned id;
  asm volatile("mov.u32 %0, %%clusterid.z;\n" : "=r"(id));
  return id;
}

// All threads of every CTA of the cluster must arrive (the .aligned forms require
// the whole warp to execute them together).
static __device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

// Arrive without ordering memory: for a rendezvous that publishes nothing.
static __device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// The shared::cluster address of `smem_address` in the shared memory of CTA `cta_rank`.
static __device__ __forceinline__ unsigned map_shared_to_cta(unsigned smem_address, unsigned cta_rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_address), "r"(cta_rank));
  return remote;
}

}  // namespace gg::dev
#endif  // GG_DEV_CLUSTER_CUH
