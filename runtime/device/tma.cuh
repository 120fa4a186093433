#ifndef GG_DEV_TMA_CUH
#define GG_DEV_TMA_CUH
// TMA (cp.async.bulk.tensor) over 2-D tensor maps, and 3-D ones whose third dimension is the
// matrix of a batch. `tensor_map` is the generic
// address of a CUtensorMap that lives in kernel parameter (__grid_constant__), constant
// or global memory. Coordinates are in elements, innermost (contiguous) dimension
// first: (col, row) of a row-major matrix.
namespace gg::dev {

// Loads one box into this CTA's shared memory at `dst`; its bytes count against the
// transaction count of mbarrier `bar` (expect them with mbarrier_arrive_expect_tx).
static __device__ __forceinline__ void tma_load_2d(unsigned dst, const void* tensor_map, unsigned bar, int col,
                                                   int row) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row)
      : "memory");
}

// Loads one box into the shared memory of every CTA of the cluster whose rank bit is
// set in `cta_mask`, at the same offset `dst`; each receiving CTA's barrier at offset
// `bar` gets the box's bytes.
static __device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const void* tensor_map, unsigned bar,
                                                             int col, int row, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row), "h"(cta_mask)
      : "memory");
}

// A CTA pair's load (cta_group::2): the box lands in this CTA's shared memory at `dst`, and its
// bytes count against the mbarrier at offset `bar` in CTA `leader` of the cluster (the pair's even
// CTA, whose MMAs read both CTAs' stages).
static __device__ __forceinline__ void tma_load_2d_pair(unsigned dst, const void* tensor_map, unsigned bar, int col,
                                                        int row, unsigned leader) {
  asm volatile(
      "{\n"
      ".reg .b32 leader_bar;\n"
      "mapa.shared::cluster.u32 leader_bar, %2, %5;\n"
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [leader_bar];\n"
      "}\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row), "r"(leader)
      : "memory");
}
static __device__ __forceinline__ void tma_load_3d_pair(unsigned dst, const void* tensor_map, unsigned bar, int col,
                                                        int row, int batch, unsigned leader) {
  asm volatile(
      "{\n"
      ".reg .b32 leader_bar;\n"
      "mapa.shared::cluster.u32 leader_bar, %2, %6;\n"
      "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [leader_bar];\n"
      "}\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row), "r"(batch), "r"(leader)
      : "memory");
}

// The 3-D forms: the box of matrix `batch` of a batched tensor map.
static __device__ __forceinline__ void tma_load_3d(unsigned dst, const void* tensor_map, unsigned bar, int col,
                                                   int row, int batch) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row), "r"(batch)
      : "memory");
}

static __device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const void* tensor_map, unsigned bar,
                                                             int col, int row, int batch, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(col), "r"(row), "r"(batch), "h"(cta_mask)
      : "memory");
}

static __device__ __forceinline__ void tma_store_3d(const void* tensor_map, unsigned src, int col, int row,
                                                    int batch) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(tensor_map),
               "r"(src), "r"(col), "r"(row), "r"(batch)
               : "memory");
}

// Stores one box from this CTA's shared memory; completion is tracked by bulk groups.
static __device__ __forceinline__ void tma_store_2d(const void* tensor_map, unsigned src, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(tensor_map),
               "r"(src), "r"(col), "r"(row)
               : "memory");
}

// Closes the bulk stores issued so far by this thread into one group.
static __device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most `MaxPending` groups still read their shared-memory source:
// after this the source buffers of the older groups may be overwritten.
template <int MaxPending>
static __device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(MaxPending) : "memory");
}

// Waits until at most `MaxPending` groups are incomplete (their writes performed).
template <int MaxPending>
static __device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(MaxPending) : "memory");
}

// Pulls the tensor map into the TMA unit's cache ahead of its first use.
static __device__ __forceinline__ void prefetch_tensormap(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tensor_map) : "memory");
}

}  // namespace gg::dev
#endif  // GG_DEV_TMA_CUH
