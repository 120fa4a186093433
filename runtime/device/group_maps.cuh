#ifndef GG_DEV_GROUP_MAPS_CUH
#define GG_DEV_GROUP_MAPS_CUH
// Pointer-array groups: every group's tensor maps, written on the device into a global array by
// build_group_maps (one thread per group and operand, from a host-encoded template), and read by
// the GEMM kernel's TMA, a later launch on the same stream. The builder's writes are generic-proxy
// writes; the tensor-map proxy sees them after the builder's release fence and the reader's
// acquire fence (PTX ISA, "tensormap proxy").
namespace gg::dev {

// Group `group`'s map of operand `slot` (0 A, 1 B, 2 C, 3 D).
static __device__ __forceinline__ const GgTensorMap* group_map(const GgTensorMap* maps, long long group, int slot) {
  return maps + group * GG_GROUP_MAP_SLOTS + slot;
}

// Before this thread's first TMA through `map` (one group's map in the array).
static __device__ __forceinline__ void acquire_group_map(const GgTensorMap* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
}

// Before this thread's first TMA through group `group`'s maps.
static __device__ __forceinline__ void acquire_group_maps(const GgTensorMap* maps, long long group) {
#pragma unroll
  for (int slot = 0; slot < GG_GROUP_MAP_SLOTS; ++slot) acquire_group_map(group_map(maps, group, slot));
}

// The map of operand `slot` of group `group`: the template with the group's pointer, its stored
// rows and columns (at least 1: an empty group's map is never read) and its row pitch in bytes.
static __device__ __forceinline__ void build_group_map(const GgGroupMapArgs& args, int group, int slot) {
  if (args.pointers[slot] == nullptr) return;
  const int m = args.sizes[3 * group], n = args.sizes[3 * group + 1], k = args.sizes[3 * group + 2];
  // A [M, K], B [N, K], C and D [M, N]; an MN-major operand (a column-major output) is stored
  // transposed.
  const int rows = slot == 0 ? m : slot == 1 ? n : m;
  const int cols = slot < 2 ? k : n;
  const bool transposed = args.transposed[slot] != 0;
  const unsigned stored_cols = static_cast<unsigned>(max(transposed ? rows : cols, 1));
  const unsigned stored_rows = static_cast<unsigned>(max(transposed ? cols : rows, 1));
  const long long ld = args.lds[slot] != nullptr ? args.lds[slot][group] : static_cast<long long>(stored_cols);
  GgTensorMap* map = const_cast<GgTensorMap*>(group_map(args.maps, group, slot));
  *map = args.templates[slot];
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(map),
               "l"(args.pointers[slot][group])
               : "memory");
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 0, %1;" ::"l"(map), "r"(stored_cols)
               : "memory");
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;" ::"l"(map), "r"(stored_rows)
               : "memory");
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0, %1;" ::"l"(map),
               "l"(static_cast<unsigned long long>(ld) * static_cast<unsigned long long>(args.elem_bytes[slot]))
               : "memory");
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
}

// One thread per (group, slot) over a 1-D grid.
static __device__ __forceinline__ void build_group_maps(const GgGroupMapArgs& args) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int group = t / GG_GROUP_MAP_SLOTS, slot = t % GG_GROUP_MAP_SLOTS;
  if (group < args.groups) build_group_map(args, group, slot);
}

}  // namespace gg::dev

#endif  // GG_DEV_GROUP_MAPS_CUH
