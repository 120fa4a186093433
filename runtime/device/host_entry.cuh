#ifndef GG_HOST_ENTRY_CUH
#define GG_HOST_ENTRY_CUH
// Host side of an emitted standalone .cu, compiled by nvcc in the user's program:
// tensor map encoding and the launch. Needs gemm_args.h (GgTensorMap, GgGemmArgs)
// before it. The driver is reached through cudart's entry-point lookup, so the
// program links only cudart (no -lcuda). Errors are returned and printed to stderr
// with the kernel's name and launch shape.
#include <cuda.h>  // CUtensorMap types only
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace gg::host {

// Values as in gemmgen's runtime/launch_spec.h.
enum ElemKind { kElemF16 = 0, kElemBF16 = 1, kElemF32 = 2, kElemFp8 = 3 };  // FP8: TMA moves bytes
enum SwizzleKind { kSwizzleNone = 0, kSwizzle32B = 1, kSwizzle64B = 2, kSwizzle128B = 3 };

// A tiled tensor map over stored rows x cols matrices, cols contiguous, rows row_stride elements
// apart; batches > 1 adds a third dimension of matrices batch_stride elements apart. Row-limited
// (a contiguous group's stores): a second row dimension box_rows long over a base box_rows rows
// before the matrix, as gemmgen's runtime/tensor_map.cpp encodes it.
struct TensorMapDesc {
  int elem;  // ElemKind
  unsigned long long rows, cols, row_stride, batches, batch_stride;
  unsigned box_rows, box_cols;
  int swizzle;  // SwizzleKind
  int row_limited;
};

typedef CUresult (*EncodeTiledFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                  const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static EncodeTiledFn encode_tiled_fn() {
  static EncodeTiledFn fn = nullptr;
  if (fn == nullptr) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI version of the cuTensorMapEncodeTiled signature above.
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &address, 12000, cudaEnableDefault, &found) ==
            cudaSuccess &&
        found == cudaDriverEntryPointSuccess) {
      fn = reinterpret_cast<EncodeTiledFn>(address);
    }
  }
  return fn;
}

// Returns 0 (CUDA_SUCCESS) or the failing CUresult / -1 when the driver lacks the function.
static int encode_tensor_map(GgTensorMap* out, const void* base, const TensorMapDesc& desc,
                                const char* kernel_name, const char* operand_name) {
  EncodeTiledFn encode = encode_tiled_fn();
  if (encode == nullptr) {
    std::fprintf(stderr, "gemmgen: kernel %s: cuTensorMapEncodeTiled is not available from the driver\n",
                 kernel_name);
    return -1;
  }
  const CUtensorMapDataType types[] = {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                       CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_UINT8};
  const unsigned long long elem_bytes[] = {2, 2, 4, 1};
  const CUtensorMapSwizzle swizzles[] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                         CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
  const unsigned long long pitch = desc.row_stride * elem_bytes[desc.elem];
  cuuint64_t dims[3] = {desc.cols, desc.rows, desc.batches};  // innermost first
  cuuint64_t strides[2] = {pitch, desc.batch_stride * elem_bytes[desc.elem]};
  if (desc.row_limited) {
    dims[1] = desc.box_rows;
    dims[2] = desc.rows + desc.box_rows;
    strides[1] = pitch;
    base = static_cast<const char*>(base) - desc.box_rows * pitch;
  }
  const cuuint32_t box[3] = {desc.box_cols, desc.box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  const CUresult status =
      encode(&map, types[desc.elem], desc.batches > 1 || desc.row_limited ? 3 : 2, const_cast<void*>(base), dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[desc.swizzle],
             GG_TENSOR_MAP_L2_PROMOTION_BYTES(pitch) == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                                            : CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "gemmgen: kernel %s: encoding the tensor map of operand %s (%llux%llu, box %ux%u) failed with "
                 "CUresult %d\n",
                 kernel_name, operand_name, desc.rows, desc.cols, desc.box_rows, desc.box_cols,
                 static_cast<int>(status));
    return static_cast<int>(status);
  }
  static_assert(sizeof(GgTensorMap) == sizeof(CUtensorMap), "GgTensorMap must hold a CUtensorMap");
  std::memcpy(out, &map, sizeof(map));
  return 0;
}

static void report_launch_error(const char* kernel_name, const char* what, cudaError_t status, dim3 grid,
                                dim3 block, dim3 cluster, unsigned smem_bytes) {
  std::fprintf(stderr,
               "gemmgen: kernel %s (grid {%u,%u,%u}, block {%u,%u,%u}, cluster {%u,%u,%u}, %u bytes dynamic smem): "
               "%s failed: %s: %s\n",
               kernel_name, grid.x, grid.y, grid.z, block.x, block.y, block.z, cluster.x, cluster.y, cluster.z,
               smem_bytes, what, cudaGetErrorName(status), cudaGetErrorString(status));
}

// The staged operands' copy kernel's CTAs (GG_STAGE_THREADS each), as gemmgen's runtime/launch.cpp
// sizes them: one per GG_STAGE_THREADS 16-byte pieces of the copies, at most GG_STAGE_CTAS_PER_SM
// per SM (the threads stride over the rest).
static unsigned stage_blocks(const GgStageArgs* stage) {
  static int sms = 0;
  if (sms == 0) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      sms = 1;
  }
  unsigned long long pieces = 0;
  for (int i = 0; i < stage->count; ++i) {
    const GgStageCopy& c = stage->copies[i];
    pieces += (unsigned long long)GG_STAGE_COPY_PIECES(c);
  }
  const unsigned long long most = (unsigned long long)sms * GG_STAGE_CTAS_PER_SM;
  const unsigned long long blocks = (pieces + GG_STAGE_THREADS - 1) / GG_STAGE_THREADS;
  return (unsigned)(blocks < 1 ? 1 : blocks < most ? blocks : most);
}

// Launches `kernel` (a __global__ function taking one GgGemmArgs) with the given shape;
// cluster {1,1,1} launches without a cluster attribute. A persistent kernel (its loop strided by
// the grid) runs no more clusters along x than the device holds at once: a cluster stays inside
// one GPC, so fewer of 4 fit than the SMs over 4, and a grid past them would run its last
// clusters after the rest finish.
static cudaError_t launch_kernel(const void* kernel, const char* kernel_name, dim3 grid, dim3 block, dim3 cluster,
                                 unsigned smem_bytes, const GgGemmArgs& args, cudaStream_t stream,
                                 bool persistent = false) {
  cudaError_t status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes));
  if (status != cudaSuccess) {
    report_launch_error(kernel_name, "cudaFuncSetAttribute(max dynamic smem)", status, grid, block, cluster,
                        smem_bytes);
    return status;
  }
  const unsigned cluster_size = cluster.x * cluster.y * cluster.z;
  if (cluster_size > 8) {
    status = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (status != cudaSuccess) {
      report_launch_error(kernel_name, "cudaFuncSetAttribute(non-portable cluster)", status, grid, block, cluster,
                          smem_bytes);
      return status;
    }
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  if (cluster_size != 1) {
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = cluster.x;
    attribute[0].val.clusterDim.y = cluster.y;
    attribute[0].val.clusterDim.z = cluster.z;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  if (persistent) {
    int resident = 0;
    if (cluster_size == 1) {
      int device = 0, sms = 0, per_sm = 0;
      status = cudaGetDevice(&device);
      if (status == cudaSuccess) status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      if (status == cudaSuccess)
        status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block.x * block.y * block.z),
                                                               smem_bytes);
      resident = sms * per_sm;
    } else {
      status = cudaOccupancyMaxActiveClusters(&resident, kernel, &config);
    }
    if (status != cudaSuccess) {
      report_launch_error(kernel_name, "counting the resident clusters", status, grid, block, cluster, smem_bytes);
      return status;
    }
    if (resident > 0 && grid.x / cluster.x > static_cast<unsigned>(resident)) {
      grid.x = static_cast<unsigned>(resident) * cluster.x;
      config.gridDim = grid;
    }
  }
  GgGemmArgs by_value = args;
  void* params[] = {&by_value};
  status = cudaLaunchKernelExC(&config, kernel, params);
  if (status != cudaSuccess) {
    report_launch_error(kernel_name, "cudaLaunchKernelExC", status, grid, block, cluster, smem_bytes);
  }
  return status;
}

}  // namespace gg::host
#endif  // GG_HOST_ENTRY_CUH
