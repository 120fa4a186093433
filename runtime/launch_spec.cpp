#include "runtime/launch_spec.h"

#include <algorithm>

#include "runtime/device/gemm_args.h"
#include "runtime/tensor_map.h"
#include "runtime/ue8m0_atoms.h"

namespace gg::rt {

int elem_bytes(ElemType t) {
  switch (t) {
    case ElemType::F32: return 4;
    case ElemType::F16:
    case ElemType::BF16: return 2;
    case ElemType::E4M3:
    case ElemType::E5M2: return 1;
  }
  return 0;
}

bool elem_is_fp8(ElemType t) { return t == ElemType::E4M3 || t == ElemType::E5M2; }

const char* elem_name(ElemType t) {
  switch (t) {
    case ElemType::F16: return "f16";
    case ElemType::BF16: return "bf16";
    case ElemType::F32: return "f32";
    case ElemType::E4M3: return "e4m3";
    case ElemType::E5M2: return "e5m2";
  }
  return "?";
}

MatrixLayouts resolve_layouts(const MatrixLayouts& l, int64_t m, int64_t n, int64_t k) {
  MatrixLayouts r = l;
  auto dense = [](int64_t& ld, int64_t row) {
    if (ld <= 0) ld = row;
  };
  dense(r.lda, l.a_mn_major ? m : k);
  dense(r.ldb, l.b_mn_major ? n : k);
  dense(r.ldc, l.d_column_major ? m : n);
  dense(r.ldd, l.d_column_major ? m : n);
  auto stride = [](int64_t& s, int64_t ld, int64_t rows) {
    if (s < 0) s = ld * rows;
  };
  stride(r.stride_a, r.lda, l.a_mn_major ? k : m);
  stride(r.stride_b, r.ldb, l.b_mn_major ? k : n);
  stride(r.stride_c, r.ldc, l.d_column_major ? n : m);
  stride(r.stride_d, r.ldd, l.d_column_major ? n : m);
  return r;
}

MatrixLayouts exchange_operands(const MatrixLayouts& l) {
  MatrixLayouts s = l;
  s.a_mn_major = l.b_mn_major;
  s.b_mn_major = l.a_mn_major;
  s.d_column_major = !l.d_column_major;
  s.lda = l.ldb;
  s.ldb = l.lda;
  s.stride_a = l.stride_b;
  s.stride_b = l.stride_a;
  return s;
}

MatrixLayouts caller_layouts(const LaunchSpec& spec) {
  return spec.swapped ? exchange_operands(spec.layouts) : spec.layouts;
}

StoredMatrix stored_matrix(const MatrixLayouts& layouts, Operand operand, int64_t m, int64_t n, int64_t k) {
  if (layouts.scales_ue8m0 && (operand == Operand::ScaleA || operand == Operand::ScaleB)) {
    const bool of_a = operand == Operand::ScaleA;
    const int64_t k_groups = ue8m0_atoms_along_k(k);
    StoredMatrix s;
    s.rows = ((of_a ? m : n) + 127) / 128 * k_groups;
    s.cols = s.row_stride = 128;
    s.batches = stored_matrix(layouts, of_a ? Operand::A : Operand::B, m, n, k).batches;
    s.batch_stride = s.batches > 1 ? s.rows * s.row_stride : 0;
    return s;
  }
  if (operand == Operand::ScaleA) {
    StoredMatrix s;
    s.transposed = true;
    s.rows = (k + 127) / 128;
    s.cols = m;
    s.row_stride = (m + 3) / 4 * 4;
    // One matrix of factors per matrix of A (masked groups, batches); contiguous groups share A's.
    s.batches = stored_matrix(layouts, Operand::A, m, n, k).batches;
    s.batch_stride = s.batches > 1 ? s.rows * s.row_stride : 0;
    return s;
  }
  const MatrixLayouts l = resolve_layouts(layouts, m, n, k);
  const bool input = operand == Operand::A || operand == Operand::B;
  const int64_t major = operand == Operand::B ? n : m, minor = input ? k : n;
  StoredMatrix s;
  int64_t stride = 0;
  switch (operand) {
    case Operand::A: s.transposed = l.a_mn_major, s.row_stride = l.lda, stride = l.stride_a; break;
    case Operand::B: s.transposed = l.b_mn_major, s.row_stride = l.ldb, stride = l.stride_b; break;
    case Operand::C: s.transposed = l.d_column_major, s.row_stride = l.ldc, stride = l.stride_c; break;
    case Operand::D:
    case Operand::Aux: s.transposed = l.d_column_major, s.row_stride = l.ldd, stride = l.stride_d; break;
    case Operand::ScaleA:
    case Operand::ScaleB: break;  // (above)
  }
  s.rows = s.transposed ? minor : major;
  s.cols = s.transposed ? major : minor;
  s.batches = stride == 0 ? 1 : l.batch;
  s.batch_stride = stride;
  return s;
}

StoredMatrix staged_matrix(const StoredMatrix& caller, ElemType elem) {
  StoredMatrix s = caller;
  const int64_t per_piece = GG_STAGE_PITCH_BYTES / elem_bytes(elem);
  s.row_stride = (caller.cols + per_piece - 1) / per_piece * per_piece;
  s.batch_stride = s.batches > 1 ? s.rows * s.row_stride : 0;
  return s;
}

uint64_t staged_bytes(const StoredMatrix& staged, ElemType elem) {
  const auto bytes = static_cast<uint64_t>(staged.batches * staged.rows * staged.row_stride * elem_bytes(elem));
  return (bytes + 255) / 256 * 256;
}

std::string layout_differences(const MatrixLayouts& e, const MatrixLayouts& g) {
  std::string out;
  auto field = [&](const char* name, int64_t want, int64_t got) {
    if (want != got)
      out += std::string(out.empty() ? "" : ", ") + name + " " + std::to_string(got) + " (generated for " +
             std::to_string(want) + ")";
  };
  field("A MN-major", e.a_mn_major, g.a_mn_major);
  field("B MN-major", e.b_mn_major, g.b_mn_major);
  field("D column-major", e.d_column_major, g.d_column_major);
  field("lda", e.lda, g.lda);
  field("ldb", e.ldb, g.ldb);
  field("ldc", e.ldc, g.ldc);
  field("ldd", e.ldd, g.ldd);
  field("batch", e.batch, g.batch);
  field("stride_a", e.stride_a, g.stride_a);
  field("stride_b", e.stride_b, g.stride_b);
  field("stride_c", e.stride_c, g.stride_c);
  field("stride_d", e.stride_d, g.stride_d);
  return out;
}

}  // namespace gg::rt

namespace gg::rt {

uint64_t SizedCount::at(int64_t m, int64_t n) const {
  const auto tiles = [](int64_t size, uint64_t divisor) -> uint64_t {
    return divisor == 0 ? 1 : (static_cast<uint64_t>(size) + divisor - 1) / divisor;
  };
  return constant * tiles(m, m_divisor) * tiles(n, n_divisor);
}

namespace {

std::array<unsigned, 3> planned_grid(const LaunchSpec& spec, int64_t m, int64_t n) {
  const RuntimeSizes& r = spec.sizes;
  if (!r.m && !r.n) return spec.grid;
  std::array<unsigned, 3> grid{};
  if (r.persistent) {
    const uint64_t units = r.units.at(m, n);
    const uint64_t groups = std::max<uint64_t>(1, std::min((units + r.cluster_ctas - 1) / r.cluster_ctas, r.max_clusters));
    return {static_cast<unsigned>(groups * spec.cluster[0]), spec.cluster[1], spec.cluster[2]};
  }
  for (size_t d = 0; d < 3; ++d) grid[d] = static_cast<unsigned>(std::max<uint64_t>(1, r.grid[d].at(m, n)));
  return grid;
}

}  // namespace

std::array<unsigned, 3> launch_grid(const LaunchSpec& spec, int64_t m, int64_t n, uint64_t resident_clusters) {
  std::array<unsigned, 3> grid = planned_grid(spec, m, n);
  // A persistent grid is one row of clusters along x.
  if (spec.persistent && resident_clusters > 0 && spec.cluster[0] > 0 && grid[0] / spec.cluster[0] > resident_clusters)
    grid[0] = static_cast<unsigned>(resident_clusters) * spec.cluster[0];
  return grid;
}

uint64_t launch_workspace_bytes(const LaunchSpec& spec, int64_t m, int64_t n) {
  const RuntimeSizes& r = spec.sizes;
  if ((!r.m && !r.n) || spec.workspace_bytes == 0) return spec.workspace_bytes;
  const uint64_t slots = r.workspace_slots.at(m, n);
  return slots * r.workspace_slot_bytes + slots * 4;
}

std::string sizes_mismatch(const LaunchSpec& spec, int64_t m, int64_t n, int64_t k) {
  const RuntimeSizes& r = spec.sizes;
  std::string out;
  const auto compiled = [&](const char* name, int64_t want, int64_t got) {
    if (want != 0 && want != got)
      out += std::string(out.empty() ? "" : "; ") + "the kernel was compiled for " + name + "=" + std::to_string(want) +
             ", the problem has " + name + "=" + std::to_string(got);
  };
  compiled("M", r.compiled_m, m);
  compiled("N", r.compiled_n, n);
  compiled("K", r.compiled_k, k);
  if (!out.empty()) return out;
  for (const RuntimeSizes::Bound& b : r.bounds)
    if (const uint64_t count = b.count.at(m, n); count > b.most)
      out += std::string(out.empty() ? "" : "; ") + "M=" + std::to_string(m) + " N=" + std::to_string(n) + " takes " +
             std::to_string(count) + " " + b.what + ", more than the " + std::to_string(b.most) + " it may have";
  // A tensor map resolved per launch over rows that follow M or N: its rows must lie a 16-byte
  // multiple apart at this launch, and a TMA store's rows be whole 16-byte pieces (it writes a
  // row's last piece whole). Staged operands' copies are aligned whatever the size.
  if ((r.m || r.n) && !spec.pointer_array)
    for (const TensorMapSpec& t : spec.tensor_maps) {
      if (t.rows != 0 || t.cols != 0 || t.staged || t.operand == Operand::ScaleA || t.operand == Operand::ScaleB) continue;
      const StoredMatrix s = stored_matrix(spec.layouts, t.operand, m, n, k);
      const int64_t bytes = elem_bytes(t.elem), row_bytes = s.cols * bytes, pitch = s.row_stride * bytes;
      const bool store = t.operand == Operand::D || t.operand == Operand::Aux;
      if (pitch % 16 == 0 && (!store || row_bytes % 16 == 0)) continue;
      out += std::string(out.empty() ? "" : "; ") + "at M=" + std::to_string(m) + " N=" + std::to_string(n) + " " +
             operand_name(t.operand) + "'s stored rows are " + std::to_string(s.cols) + " elements (" +
             std::to_string(row_bytes) + " bytes), " + std::to_string(pitch) + " bytes apart: its TMA " +
             (store ? "store writes whole 16-byte pieces of rows 16-byte multiples apart"
                    : "load needs rows a 16-byte multiple apart") +
             "; this kernel serves sizes that keep them so (plan for this size, as gg::gemm does)";
    }
  return out;
}

}  // namespace gg::rt
