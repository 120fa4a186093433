#include "codegen/emit.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "codegen/cuda_printer.h"
#include "codegen/device_helpers.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/device/gemm_args.h"
#include "runtime/embedded_headers.h"
#include "runtime/hash.h"
#include "runtime/jit.h"

namespace gg {

namespace {

// A runtime/device header pasted into the .cu; wgmma_mma.cuh with only the kernel's wrappers.
std::string embed(std::string_view name, const DeviceHelpers& helpers = {}) {
  const std::string text = name == "wgmma_mma.cuh" ? rt::device_header_with_sections(name, helpers.wgmma_wrappers)
                                                   : std::string(rt::device_header_source(name));
  std::string out = "// ---- runtime/device/" + std::string(name) + "\n";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("#pragma once", 0) != 0) out += line + "\n";  // the embedding is the main file
  return out;
}

// Compiled for another arch, the kernel would fail deep in ptxas (no wgmma, no tcgen05); stop at
// its first lines instead. nvcc and NVRTC define __CUDA_ARCH_FEAT_SM90_ALL for sm_90a (and
// SM100 for sm_100a) in device passes only; the host pass, which compiles the host entry,
// defines no __CUDA_ARCH__.
std::string arch_guard(Target target) {
  const std::string arch(target_name(target));              // "sm_90a"
  const std::string number = arch.substr(3, arch.size() - 4);  // "90"
  return "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM" + number + "_ALL)\n" +
         "#error \"this kernel was generated for " + arch + ": compile it with -gencode=arch=compute_" + number +
         "a,code=" + arch + "\"\n#endif\n\n";
}

std::string comment_block(const std::string& title, const std::string& text) {
  std::string out = "// " + title + ":\n";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += "//   " + line + "\n";
  return out;
}

// "A[M,K] K-major, B[N,K] N-major ldb=4104, D[M,N] row-major, batch 3"
std::string layouts_text(const Definition& def) {
  const auto& ops = def.matmul_node().operands;
  auto stored = [&](const Node& n, const std::string& shape, const std::string& major) {
    std::string t = n.name + shape + " " + major;
    if (n.ld > 0) t += " ld=" + std::to_string(n.ld);
    if (def.batch() > 1 && n.batch_stride >= 0) t += " batch_stride=" + std::to_string(n.batch_stride);
    return t;
  };
  const Node &a = def.node(ops[0]), &b = def.node(ops[1]), &d = def.node(def.output());
  std::string t = stored(a, "[M,K]", a.layout == Layout::KMajor ? "K-major" : "M-major") + ", " +
                  stored(b, "[N,K]", b.layout == Layout::KMajor ? "K-major" : "N-major") + ", " +
                  stored(d, "[M,N]", def.output_layout() == OutputLayout::ColumnMajor ? "column-major" : "row-major");
  if (def.batch() > 1) t += ", batch " + std::to_string(def.batch());
  return t;
}

int host_elem(rt::ElemType t) {
  return rt::elem_is_fp8(t) ? 3 : t == rt::ElemType::F16 ? 0 : t == rt::ElemType::BF16 ? 1 : 2;
}

// C text for the emitted host entry's values that follow the sizes: `m`, `n` and `k` are its
// arguments (in the kernel's orientation once a swapped entry has exchanged them).
std::string sized_c(const rt::SizedCount& c) {
  std::vector<std::string> factors;
  if (c.constant != 1 || !c.sized()) factors.push_back(std::to_string(c.constant) + "ull");
  const auto tiles = [](const char* size, uint64_t d) {
    return d == 1 ? std::string("(unsigned long long)") + size
                  : "(((unsigned long long)" + std::string(size) + " + " + std::to_string(d - 1) + "ull) / " +
                        std::to_string(d) + "ull)";
  };
  if (c.m_divisor) factors.push_back(tiles("m", c.m_divisor));
  if (c.n_divisor) factors.push_back(tiles("n", c.n_divisor));
  std::string t;
  for (const std::string& f : factors) t += (t.empty() ? "" : " * ") + f;
  return t;
}

// The leading dimensions and batch strides: the kernel's constants, or (a dense placeholder of a
// kernel that reads sizes at run time) the dense value for the call's sizes, as resolve_layouts.
std::string layout_args_c(const rt::MatrixLayouts& l) {
  const auto ld = [](int64_t v, const char* dense) { return v > 0 ? std::to_string(v) : std::string(dense); };
  const auto stride = [](int64_t v, const std::string& dense) { return v >= 0 ? std::to_string(v) : dense; };
  std::ostringstream os;
  os << "  args.lda = " << ld(l.lda, l.a_mn_major ? "m" : "k") << "; args.ldb = " << ld(l.ldb, l.b_mn_major ? "n" : "k")
     << "; args.ldc = " << ld(l.ldc, l.d_column_major ? "m" : "n") << "; args.ldd = "
     << ld(l.ldd, l.d_column_major ? "m" : "n") << "; args.batch = " << l.batch << ";\n"
     << "  args.stride_a = " << stride(l.stride_a, std::string("args.lda * ") + (l.a_mn_major ? "k" : "m"))
     << "; args.stride_b = " << stride(l.stride_b, std::string("args.ldb * ") + (l.b_mn_major ? "k" : "n"))
     << "; args.stride_c = " << stride(l.stride_c, std::string("args.ldc * ") + (l.d_column_major ? "n" : "m"))
     << "; args.stride_d = " << stride(l.stride_d, std::string("args.ldd * ") + (l.d_column_major ? "n" : "m"))
     << ";\n";
  return os.str();
}

// A tensor map's stored rows and columns for the call (rt::stored_matrix's rule, in C): the
// spec's extents, or where they are resolved per launch (0), the call's sizes.
std::pair<std::string, std::string> map_extents_c(const rt::TensorMapSpec& t, const rt::MatrixLayouts& l) {
  const bool input = t.operand == rt::Operand::A || t.operand == rt::Operand::B;
  const bool transposed = t.operand == rt::Operand::A ? l.a_mn_major : t.operand == rt::Operand::B ? l.b_mn_major
                                                                                                   : l.d_column_major;
  const std::string major = t.operand == rt::Operand::B ? "n" : "m", minor = input ? "k" : "n";
  const bool resolved = t.rows == 0 && t.cols == 0;
  return {resolved ? "(unsigned long long)" + (transposed ? minor : major) : std::to_string(t.rows) + "ull",
          resolved ? "(unsigned long long)" + (transposed ? major : minor) : std::to_string(t.cols) + "ull"};
}

int64_t map_batch_stride(const rt::TensorMapSpec& t, const rt::MatrixLayouts& l) {
  return t.operand == rt::Operand::A ? l.stride_a : t.operand == rt::Operand::B ? l.stride_b
         : t.operand == rt::Operand::C ? l.stride_c : l.stride_d;
}

// A tensor map's stored matrix for the call: map_extents_c's extents, the spec's pitch and batch
// or the call's; `slot` is its GgGemmArgs letter. A staged map reads the copy staged_copies_c made.
std::string tensor_map_desc_c(const rt::TensorMapSpec& t, const rt::MatrixLayouts& l, const char* slot) {
  const int64_t stride = map_batch_stride(t, l);
  const bool resolved = t.rows == 0 && t.cols == 0;
  const auto [rows, cols] = map_extents_c(t, l);
  std::ostringstream os;
  os << "{" << host_elem(t.elem) << ", " << rows << ", " << cols << ", ";
  if (t.staged)
    os << slot << "_pitch, " << slot << "_matrices, " << slot << "_matrices > 1 ? " << slot << "_rows * " << slot
       << "_pitch : 0ull";
  else if (resolved)
    os << "(unsigned long long)args.ld" << slot << ", " << (stride == 0 ? 1 : l.batch)
       << "ull, (unsigned long long)args.stride_" << slot;
  else
    os << (t.row_stride ? t.row_stride : t.cols) << "ull, " << t.batches << "ull, " << t.batch_stride << "ull";
  os << ", " << t.box_rows << "u, " << t.box_cols << "u, " << static_cast<int>(t.swizzle) << ", " << t.row_limited
     << "}";
  return os.str();
}

// Staged operands: the host entry copies them into aligned buffers with rows padded to whole
// GG_STAGE_PITCH_BYTES (rt::staged_matrix's rule; one static allocation grown as the sizes need), by the
// `_stage` kernel on the stream, before the kernel's maps are encoded over the copies.
std::string staged_copies_c(const Kernel& k) {
  const auto& L = k.launch;
  std::ostringstream os;
  os << "  // staged operands: copied first into aligned buffers, rows padded to whole " << GG_STAGE_PITCH_BYTES << "-byte pieces\n"
     << "  static void* staging = nullptr;\n  static unsigned long long staging_bytes = 0;\n"
     << "  GgStageArgs stage = {};\n  unsigned long long staged_end = 0;\n";
  for (const auto& t : L.tensor_maps) {
    if (!t.staged) continue;
    const std::string slot = t.operand == rt::Operand::A ? "a" : "b";
    const auto [rows, cols] = map_extents_c(t, L.layouts);
    const int per_piece = GG_STAGE_PITCH_BYTES / rt::elem_bytes(t.elem);
    const bool one_matrix = map_batch_stride(t, L.layouts) == 0 || L.layouts.batch == 1;
    os << "  const unsigned long long " << slot << "_rows = " << rows << ", " << slot << "_cols = " << cols << ", "
       << slot << "_pitch = (" << slot << "_cols + " << per_piece - 1 << "ull) / " << per_piece << "ull * " << per_piece
       << "ull, " << slot << "_matrices = " << (one_matrix ? 1 : L.layouts.batch) << "ull;\n"
       << "  const unsigned long long " << slot << "_offset = staged_end;\n"
       << "  staged_end += (" << slot << "_matrices * " << slot << "_rows * " << slot << "_pitch * "
       << rt::elem_bytes(t.elem) << "ull + 255ull) / 256ull * 256ull;\n"
       << "  {\n    GgStageCopy& c = stage.copies[stage.count++];\n"
       << "    c.src = " << slot << "; c.rows = (long long)" << slot << "_rows; c.cols = (long long)" << slot
       << "_cols; c.matrices = (long long)" << slot << "_matrices;\n"
       << "    c.src_pitch = args.ld" << slot << "; c.dst_pitch = (long long)" << slot << "_pitch;\n"
       << "    c.src_matrix_stride = " << (one_matrix ? "0" : "args.stride_" + slot) << "; c.dst_matrix_stride = (long long)("
       << slot << "_rows * " << slot << "_pitch); c.elem_bytes = " << rt::elem_bytes(t.elem) << ";\n  }\n";
  }
  os << "  if (staged_end > staging_bytes) {\n"
     << "    if (staging != nullptr) cudaFree(staging);\n    staging = nullptr;\n    staging_bytes = 0;\n"
     << "    if (cudaMalloc(&staging, staged_end) != cudaSuccess) return -1;\n    staging_bytes = staged_end;\n  }\n";
  int copy = 0;
  for (const auto& t : L.tensor_maps)
    if (t.staged) {
      const std::string slot = t.operand == rt::Operand::A ? "a" : "b";
      os << "  void* const " << slot << "_staged = (char*)staging + " << slot << "_offset;\n"
         << "  stage.copies[" << copy++ << "].dst = " << slot << "_staged;\n";
    }
  os << "  " << k.name << "_stage<<<gg::host::stage_blocks(&stage), GG_STAGE_THREADS, 0, stream>>>(stage);\n"
     << "  if (cudaGetLastError() != cudaSuccess) return -1;\n";
  return os.str();
}

// Pointer-array groups: the host entry encodes the template maps, runs the map builder over the
// caller's device arrays and launches a full wave of the kernel.
std::string pointer_array_host_entry(const Kernel& k, const std::string& fn) {
  const auto& L = k.launch;
  std::ostringstream os;
  os << "#if !defined(__CUDACC_RTC__)\n"
     << "#pragma nv_diag_suppress 177  // helpers a kernel without tensor maps leaves unused\n"
     << embed("host_entry.cuh") << "#pragma nv_diag_default 177\n\n"
     << "// Launches " << k.name << " on `groups` pointer-array groups: a, b and d are device arrays of one\n"
     << "// pointer per group, group_sizes (device) holds M, N, K of each group, lda, ldb and ldd (device;\n"
     << "// nullptr: dense) their leading dimensions in elements. group_maps is device memory for\n"
     << "// " << GG_GROUP_MAP_SLOTS << " * groups tensor maps (" << GG_GROUP_MAP_SLOTS * sizeof(GgTensorMap)
     << " bytes a group), written on the device before the kernel reads\n"
     << "// them; it must not be shared by launches in flight. Each group's N must make its D rows whole\n"
     << "// 16-byte pieces; pointers and leading dimensions must meet TMA's 16-byte alignment.\n"
     << "extern \"C\" int " << fn << "(const void* const* a, const void* const* b, void* const* d,\n"
     << "    const int* group_sizes, const long long* lda, const long long* ldb, const long long* ldd, long long groups,\n"
     << "    GgTensorMap* group_maps, cudaStream_t stream) {\n"
     << "  if (groups < 1 || a == nullptr || b == nullptr || d == nullptr || group_sizes == nullptr || group_maps == nullptr) {\n"
     << "    std::fprintf(stderr, \"gemmgen: kernel " << k.name << " needs at least one group and its device arrays\\n\");\n"
     << "    return -1;\n  }\n"
     << "  GgGroupMapArgs maps = {};\n"
     << "  maps.groups = (int)groups;\n  maps.sizes = group_sizes;\n  maps.maps = group_maps;\n";
  for (const auto& t : L.tensor_maps) {
    const int slot = static_cast<int>(t.operand);
    const char* name = t.operand == rt::Operand::A ? "a" : t.operand == rt::Operand::B ? "b" : "d";
    const bool transposed = t.operand == rt::Operand::A ? L.layouts.a_mn_major
                            : t.operand == rt::Operand::B ? L.layouts.b_mn_major : L.layouts.d_column_major;
    os << "  {  // " << name << ": the template (box, swizzle, type); each group's address, sizes and pitch replace its own\n"
       << "    const gg::host::TensorMapDesc desc = {" << host_elem(t.elem) << ", " << t.box_rows << "ull, " << t.box_cols
       << "ull, " << t.box_cols << "ull, 1ull, 0ull, " << t.box_rows << "u, " << t.box_cols << "u, "
       << static_cast<int>(t.swizzle) << ", 0};\n"
       << "    const int status = gg::host::encode_tensor_map(&maps.templates[" << slot << "], group_maps, desc, \""
       << k.name << "\", \"" << name << "\");\n"
       << "    if (status != 0) return status;\n"
       << "    maps.pointers[" << slot << "] = (const void* const*)" << name << ";\n"
       << "    maps.lds[" << slot << "] = ld" << name << ";\n"
       << "    maps.transposed[" << slot << "] = " << transposed << ";\n"
       << "    maps.elem_bytes[" << slot << "] = " << rt::elem_bytes(t.elem) << ";\n  }\n";
  }
  os << "  " << k.name << "_group_maps<<<(unsigned)((groups * " << GG_GROUP_MAP_SLOTS << " + 127) / 128), 128, 0, stream>>>(maps);\n"
     << "  if (cudaGetLastError() != cudaSuccess) return -1;\n"
     << "  GgGemmArgs args = {};\n"
     << "  args.batch = groups; args.alpha = 1.0f; args.beta = 0.0f;\n"
     << "  args.group_maps = group_maps;\n  args.group_sizes = group_sizes;\n";
  const auto dim = [](unsigned x, unsigned y, unsigned z) {
    return "dim3(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
  };
  const rt::RuntimeSizes& sizes = L.sizes;
  os << "  // a full wave: the units follow the groups' sizes, which only the device reads\n"
     << "  return static_cast<int>(gg::host::launch_kernel(reinterpret_cast<const void*>(" << k.name << "), \""
     << k.name << "\", " << dim(unsigned(sizes.max_clusters) * L.cluster[0], L.cluster[1], L.cluster[2]) << ", "
     << dim(L.block[0], L.block[1], L.block[2]) << ", " << dim(L.cluster[0], L.cluster[1], L.cluster[2]) << ", "
     << L.dynamic_smem_bytes << "u, args, stream, /*persistent=*/true));\n}\n#endif  // !__CUDACC_RTC__\n";
  return os.str();
}

std::string host_entry(const Kernel& k, const std::string& fn) {
  if (k.launch.pointer_array) return pointer_array_host_entry(k, fn);
  const KernelPlan& p = k.plan;
  const auto& L = k.launch;
  const rt::RuntimeSizes& sizes = L.sizes;
  const bool sized = sizes.m || sizes.n;
  const bool reduces = L.reduces_rows || L.reduces_cols;
  // The caller's sizes: a swapped kernel's M and N are the caller's N and M.
  const auto caller = [&](bool kernel_m, int64_t v) {
    const bool runtime = kernel_m ? sizes.m : sizes.n;
    return runtime ? std::string("any") : std::to_string(v);
  };
  const std::string m = L.swapped ? caller(false, p.n) : caller(true, p.m);
  const std::string n = L.swapped ? caller(true, p.m) : caller(false, p.n);
  const std::string k_text = sizes.compiled_k != 0 ? std::to_string(p.k) : std::string("any");
  std::ostringstream os;
  os << "#if !defined(__CUDACC_RTC__)\n"
     << "#pragma nv_diag_suppress 177  // helpers a kernel without tensor maps leaves unused\n"
     << embed("host_entry.cuh") << "#pragma nv_diag_default 177\n\n"
     << "// Launches " << k.name << " on A[M,K], B[N,K], C and D [M,N] laid out as the header's problem line says.\n"
     << "// The kernel serves M=" << m << " N=" << n << " K=" << k_text << "; other shapes are refused.\n"
     << (L.masked ? "// Masked groups: group_rows (device memory) holds each of the batch's matrices' rows in use.\n" : "")
     << (L.contiguous ? "// Contiguous groups: group_offsets (device memory, batch + 1 ints) bounds each group's rows of "
                        "A and D.\n" : "")
     << (L.varlen_k ? "// Variable-K groups: group_offsets (device memory, batch + 1 ints) bounds each group's rows of K "
                      "in A and B.\n" : "")
     << (p.fp8.scale_a || p.fp8.scale_b
             ? "// FP8 scale factors (device memory): scale_a " +
                   (p.fp8.scale_a ? k.launch.scale_a_array : std::string("unused (null)")) + ";\n// scale_b " +
                   (p.fp8.scale_b ? k.launch.scale_b_array : std::string("unused (null)")) + ".\n"
             : "")
     << (L.writes_aux ? "// aux (device memory, D's type, laid out as D): the saved second output.\n" : "")
     << (reduces ? "// row_reduction, col_reduction (device memory, fp32, [batch][M] and [batch][N]): the reductions' "
                   "vectors (null where none).\n"
                 : "")
     << "extern \"C\" int " << fn << "(const void* a, const void* b, const void* c, void* d, const void* bias,\n"
     << (p.fp8.scale_a || p.fp8.scale_b ? "    const float* scale_a, const float* scale_b,\n" : "")
     << (L.writes_aux ? "    void* aux,\n" : "")
     << (reduces ? "    float* row_reduction, float* col_reduction,\n" : "")
     << "    long long m, long long n, long long k, " << (L.masked ? "const int* group_rows, " : "")
     << (L.contiguous || L.varlen_k ? "const int* group_offsets, " : "")
     << "cudaStream_t stream) {\n";
  std::string wrong;
  if (m != "any") wrong += "m != " + m + " || ";
  if (n != "any") wrong += "n != " + n + " || ";
  if (sizes.compiled_k != 0) wrong += "k != " + std::to_string(p.k);
  else wrong += "k < 1";
  os << "  if (" << wrong << (sized ? " || m < 1 || n < 1" : "") << ") {\n"
     << "    std::fprintf(stderr, \"gemmgen: kernel " << k.name << " serves M=" << m << " N=" << n << " K=" << k_text
     << ", called with M=%lld N=%lld K=%lld\\n\", m, n, k);\n"
     << "    return -1;\n  }\n";
  if (L.swapped)
    os << "  // Planned swapped: the kernel computes D^T[N,M] = B * A^T into D's memory, so its A is the\n"
       << "  // caller's B and its M the caller's N.\n"
       << "  { const void* t = a; a = b; b = t; const long long s = m; m = n; n = s; }\n"
       << (reduces ? "  { float* t = row_reduction; row_reduction = col_reduction; col_reduction = t; }\n" : "");
  for (const rt::RuntimeSizes::Bound& b : sizes.bounds)
    os << "  if (" << sized_c(b.count) << " > " << b.most << "ull) {\n"
       << "    std::fprintf(stderr, \"gemmgen: kernel " << k.name << ": M=%lld N=%lld takes more than " << b.most << " "
       << b.what << "\\n\", m, n);\n    return -1;\n  }\n";
  if (L.symmetric) os << "  b = a;  // D = A * A^T: B is A\n";
  os << "  GgGemmArgs args = {};\n"
     << "  args.a = a; args.b = b; args.c = c; args.d = d; args.bias = bias;\n"
     << "  args.m = m; args.n = n; args.k = k; args.alpha = 1.0f; args.beta = 0.0f;\n"
     << (L.masked ? "  args.group_rows = group_rows;\n" : "")
     << (p.fp8.scale_a || p.fp8.scale_b
             ? std::string("  if (") + (p.fp8.scale_a ? "scale_a == nullptr" : "") +
                   (p.fp8.scale_a && p.fp8.scale_b ? " || " : "") + (p.fp8.scale_b ? "scale_b == nullptr" : "") +
                   ") {\n    std::fprintf(stderr, \"gemmgen: kernel " + k.name +
                   " reads FP8 scale factors; a scale pointer is null\\n\");\n    return -1;\n  }\n"
                   "  args.scale_a = scale_a; args.scale_b = scale_b;\n"
             : std::string())
     << (L.contiguous || L.varlen_k ? "  args.group_offsets = group_offsets;\n" : "")
     << (L.writes_aux ? "  if (aux == nullptr) {\n    std::fprintf(stderr, \"gemmgen: kernel " + k.name +
                            " stores a saved second output; aux is null\\n\");\n    return -1;\n  }\n  args.aux = aux;\n"
                      : std::string());
  for (const auto& [kernel_reduces, vector] : {std::pair{L.reduces_rows, "row_reduction"}, {L.reduces_cols, "col_reduction"}})
    if (kernel_reduces)
      os << "  if (" << vector << " == nullptr) {\n    std::fprintf(stderr, \"gemmgen: kernel " << k.name
         << " reduces into a side vector; " << (L.swapped ? "a reduction" : vector) << " is null\\n\");\n    return -1;\n  }\n"
         << "  args." << vector << " = " << vector << ";\n";
  os << layout_args_c(L.layouts);
  if (L.workspace_bytes != 0 && !sized)
    os << "  static void* workspace = nullptr;  // split-K scratch, zeroed once; the kernel re-zeroes it\n"
       << "  if (workspace == nullptr) {\n"
       << "    if (cudaMalloc(&workspace, " << L.workspace_bytes << ") != cudaSuccess) return -1;\n"
       << "    if (cudaMemset(workspace, 0, " << L.workspace_bytes << ") != cudaSuccess) return -1;\n  }\n"
       << "  args.workspace = workspace;\n";
  if (L.workspace_bytes != 0 && sized)
    os << "  // split-K scratch for this M and N, zeroed when it grows; the kernel re-zeroes what it uses\n"
       << "  static void* workspace = nullptr;\n  static unsigned long long workspace_bytes = 0;\n"
       << "  const unsigned long long needed = (" << sized_c(sizes.workspace_slots) << ") * "
       << sizes.workspace_slot_bytes + 4 << "ull;\n"
       << "  if (needed > workspace_bytes) {\n"
       << "    if (workspace != nullptr) cudaFree(workspace);\n    workspace = nullptr;\n    workspace_bytes = 0;\n"
       << "    if (cudaMalloc(&workspace, needed) != cudaSuccess) return -1;\n"
       << "    if (cudaMemset(workspace, 0, needed) != cudaSuccess) return -1;\n"
       << "    workspace_bytes = needed;\n  }\n  args.workspace = workspace;\n";
  if (k.plan.staged_a || k.plan.staged_b) os << staged_copies_c(k);
  for (const auto& t : L.tensor_maps) {
    if ((t.operand == rt::Operand::ScaleA || t.operand == rt::Operand::ScaleB) && L.layouts.scales_ue8m0) {
      // rt::stored_matrix's rule: a row of 128 words per UE8M0 atom, ceil(rows / 128) x ceil(K / 512) of them
      const bool of_a = t.operand == rt::Operand::ScaleA;
      const std::string atoms = std::string("(unsigned long long)((") + (of_a ? "m" : "n") + " + 127) / 128 * " +
                                std::to_string(rt::ue8m0_atoms_along_k(p.k)) + ")";
      os << "  {\n    const unsigned long long atoms = " << atoms << ";\n"
         << "    const gg::host::TensorMapDesc desc = {2, atoms, 128ull, 128ull, " << t.batches << "ull, "
         << (t.batches > 1 ? "atoms * 128ull" : "0ull") << ", 1u, 128u, 0, 0};\n"
         << "    const int status = gg::host::encode_tensor_map(&args.map_scale_" << (of_a ? "a" : "b") << ", scale_"
         << (of_a ? "a" : "b") << ", desc, \"" << k.name << "\", \"scale_" << (of_a ? "a" : "b")
         << "\");\n    if (status != 0) return status;\n  }\n";
      continue;
    }
    if (t.operand == rt::Operand::ScaleA) {  // rt::stored_matrix's rule: k blocks as rows of M factors
      os << "  {\n    const gg::host::TensorMapDesc desc = {2, (unsigned long long)((k + 127) / 128), (unsigned long long)m, "
            "(unsigned long long)((m + 3) / 4 * 4), 1ull, 0ull, 1u, "
         << t.box_cols << "u, 0, 0};\n"
         << "    const int status = gg::host::encode_tensor_map(&args.map_scale_a, scale_a, desc, \"" << k.name
         << "\", \"scale_a\");\n    if (status != 0) return status;\n  }\n";
      continue;
    }
    const char* slot = t.operand == rt::Operand::A ? "a" : t.operand == rt::Operand::B ? "b"
                       : t.operand == rt::Operand::C ? "c" : t.operand == rt::Operand::Aux ? "aux" : "d";
    // the saved output lies as D does: D's leading dimension and stride
    const char* layout_slot = t.operand == rt::Operand::Aux ? "d" : slot;
    const std::string base = t.staged ? std::string(slot) + "_staged" : std::string(slot);  // a staged map reads the copy
    os << "  {\n    const gg::host::TensorMapDesc desc = " << tensor_map_desc_c(t, L.layouts, layout_slot) << ";\n"
       << "    const int status = gg::host::encode_tensor_map(&args.map_" << slot << ", " << base << ", desc, \""
       << k.name << "\", \"" << slot << "\");\n"
       << "    if (status != 0) return status;\n  }\n";
  }
  auto dim = [](const std::array<unsigned, 3>& d) {
    return "dim3(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
  };
  std::string grid = dim(L.grid);
  if (sized && sizes.persistent) {
    os << "  const unsigned long long units = " << sized_c(sizes.units) << ", groups = (units + "
       << sizes.cluster_ctas - 1 << "ull) / " << sizes.cluster_ctas << "ull;\n"
       << "  const unsigned clusters = (unsigned)(groups < " << sizes.max_clusters << "ull ? (groups ? groups : 1ull) : "
       << sizes.max_clusters << "ull);  // one wave at most\n";
    grid = "dim3(clusters * " + std::to_string(L.cluster[0]) + "u, " + std::to_string(L.cluster[1]) + ", " +
           std::to_string(L.cluster[2]) + ")";
  } else if (sized) {
    const auto extent = [](const rt::SizedCount& c) {
      return c.sized() ? "(unsigned)(" + sized_c(c) + ")" : std::to_string(c.constant);
    };
    grid = "dim3(" + extent(sizes.grid[0]) + ", " + extent(sizes.grid[1]) + ", " + extent(sizes.grid[2]) + ")";
  }
  os << "  return static_cast<int>(gg::host::launch_kernel(reinterpret_cast<const void*>(" << k.name << "), \""
     << k.name << "\", " << grid << ", " << dim(L.block) << ", " << dim(L.cluster) << ", "
     << L.dynamic_smem_bytes << "u, args, stream" << (L.persistent ? ", /*persistent=*/true" : "")
     << "));\n}\n#endif  // !__CUDACC_RTC__\n";
  return os.str();
}

}  // namespace

EmittedKernel emit_cuda(const Schedule& s, const LowerOptions& options) {
  const Definition& def = s.definition();
  std::string schedule_text = print_schedule(s);
  std::ostringstream shape;
  shape << "M=" << def.m() << " N=" << def.n() << " K=" << def.k() << " " << dtype_name(def.input_dtype()) << " -> "
        << dtype_name(def.output_dtype());
  Kernel k = lower(s, options);
  const KernelPlan& p = k.plan;
  // Named for its code and launch alone, not the problem's sizes it reads at run time: a plan for
  // another M that makes the same kernel makes the same name (and one JIT compile). Printed once
  // under a placeholder name, which the real one then replaces.
  const std::string placeholder = "gg_kernel";
  k.name = placeholder;
  std::string body = print_cuda_kernel(k);
  std::ostringstream launch_key;
  const rt::LaunchSpec& L = k.launch;
  launch_key << L.block[0] << "," << L.cluster[0] << L.cluster[1] << L.cluster[2] << "," << L.dynamic_smem_bytes << ","
             << L.swapped << "," << rt::layout_differences({}, L.layouts) << "," << L.sizes.max_clusters;
  if (!L.sizes.m && !L.sizes.n) launch_key << "," << shape.str() << L.grid[0] << L.grid[1] << L.grid[2];
  std::ostringstream name;
  name << "gg_gemm_" << target_name(p.target).substr(3) << "_" << p.tile_m << "x" << p.tile_n << "x" << p.tile_k
       << "_s" << p.pipeline.stages << "_" << std::hex << (rt::fnv1a64(body + launch_key.str()) & 0xffffffffu);
  k.name = name.str();
  k.launch.kernel_name = k.name;
  // The kernel names itself in its signature, and its companions are named after it: a
  // pointer-array kernel's map builder (`<name>_group_maps`), a staging kernel's copy (`<name>_stage`).
  const size_t at = body.find(placeholder + "(");
  GG_INTERNAL_CHECK(at != std::string::npos, "the printed kernel names itself in its signature");
  std::vector<size_t> names{at};
  for (const char* companion : {"_group_maps(", "_stage("})
    if (const size_t c = body.find(placeholder + companion); c != std::string::npos) names.push_back(c);
  size_t mentions = 0;
  for (size_t i = body.find(placeholder); i != std::string::npos; i = body.find(placeholder, i + 1)) ++mentions;
  GG_INTERNAL_CHECK(mentions == names.size(), "the printed kernel names itself once, in its signature (and its companions')");
  std::sort(names.rbegin(), names.rend());  // from the back, so earlier offsets stay valid
  for (size_t i : names) body.replace(i, placeholder.size(), k.name);

  std::ostringstream os;
  os << "// Generated by gemmgen " << rt::gemmgen_version() << ". Do not edit: regenerate from the schedule below.\n"
     << "// kernel: " << k.name << "\n"
     << "// target: " << target_name(p.target) << "\n"
     << "// problem: " << shape.str() << " (" << layouts_text(def) << ")\n";
  if (def.swapped())
    os << "// orientation: swapped: the caller's D[M,N] = A * B^T for M=" << def.n() << " N=" << def.m()
       << " is computed as D^T = B * A^T (the problem above); the host entry takes the caller's A, B, M and N\n";
  os
     << comment_block("definition", def.to_string()) << comment_block("schedule", schedule_text);
  std::string choices;  // what each `auto` copy became for this problem
  for (const auto& d : s.directives())
    if (auto why = copy_choice_of(s, d)) choices += *why + "\n";
  if (!choices.empty()) os << comment_block("copies", choices);
  os << "// launch: grid {" << k.launch.grid[0] << "," << k.launch.grid[1] << "," << k.launch.grid[2] << "}, block {"
     << k.launch.block[0] << ",1,1}, cluster {" << k.launch.cluster[0] << "," << k.launch.cluster[1] << ","
     << k.launch.cluster[2] << "}, " << k.launch.dynamic_smem_bytes << " bytes of dynamic shared memory\n\n";
  // Only the headers the kernel calls into; their other helpers are unused statics, not mistakes.
  const DeviceHelpers helpers = device_helpers_used(k);
  os << arch_guard(p.target) << "#pragma nv_diag_suppress 177\n";
  for (const std::string& h : helpers.headers) os << embed(h, helpers) << "\n";
  os << "#pragma nv_diag_default 177\n\n";
  os << "// ---- kernel\n" << body << "\n";
  std::string fn = k.name + "_launch";
  os << host_entry(k, fn);

  EmittedKernel out;
  out.source = os.str();
  out.kernel_name = k.name;
  out.launch_function = fn;
  out.launch = k.launch;
  out.plan = k.plan;
  return out;
}

}  // namespace gg
