#include "codegen/pointer_array_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dsl/error.h"
#include "runtime/cublas_reference.h"
#include "runtime/cuda_error.h"
#include "runtime/device_buffer.h"
#include "runtime/device_info.h"
#include "runtime/host_reference.h"
#include "runtime/timing.h"

namespace gg {

namespace {

// One group's matrix as it lies in its own allocation: rows x cols stored (cols contiguous), rows
// `ld` apart with poison (NaN) between; `host` the logical row-major values (A [M, K], B [N, K]).
struct GroupMatrix {
  rt::DeviceBuffer buffer;
  std::vector<float> host, stored;
  int64_t ld = 0;
};

// A leading dimension with TMA's 16-byte row pitch, and (`padded`: odd groups) 8 elements of
// padding more, so a kernel reading a group's rows with another group's pitch shows up.
int64_t padded_ld(int64_t cols, int64_t group, bool padded) {
  return (std::max<int64_t>(cols, 1) + 7) / 8 * 8 + (padded ? (group % 2) * 8 : 0);
}

GroupMatrix make_matrix(rt::ElemType type, int64_t rows, int64_t cols, bool transposed, int64_t group, bool padded,
                        bool exact, uint64_t seed) {
  GroupMatrix g;
  const int64_t stored_rows = transposed ? cols : rows, stored_cols = transposed ? rows : cols;
  g.ld = padded_ld(stored_cols, group, padded);
  const size_t count = size_t(rows * cols);
  g.host = exact ? rt::small_integer_values(count, seed) : rt::random_uniform_values(type, count, seed);
  g.stored.assign(size_t(std::max<int64_t>(1, stored_rows * g.ld)), std::nanf(""));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      g.stored[size_t(transposed ? c * g.ld + r : r * g.ld + c)] = g.host[size_t(r * cols + c)];
  g.buffer = rt::DeviceBuffer(type, g.stored.size());
  g.buffer.upload(g.stored);
  return g;
}

}  // namespace

std::vector<int64_t> group_sizes_or_planned(const std::vector<int64_t>& given, const Definition& def) {
  std::vector<int64_t> sizes = given;
  for (int64_t g = int64_t(given.size()) / 3; g < def.batch(); ++g) sizes.insert(sizes.end(), {def.m(), def.n(), def.k()});
  sizes.resize(size_t(3 * def.batch()));
  const int out_bytes = dtype_bytes(def.output_dtype());
  for (int64_t g = 0; g < def.batch(); ++g)
    if (const int64_t n = sizes[size_t(3 * g + 1)]; n > 0 && (n * out_bytes) % 16 != 0)
      throw_user_error("bad-group-rows",
                       "pointer-array group " + std::to_string(g) + " has N=" + std::to_string(n) + ": a row of its D is " +
                           std::to_string(n * out_bytes) + " bytes, and a TMA store writes a row's last 16-byte piece "
                           "whole (past N); each group's N must be a multiple of " + std::to_string(16 / out_bytes));
  return sizes;
}

CheckReport check_pointer_array(const EmittedKernel& e, rt::LoadedKernel& kernel, const Definition& def,
                                const CheckOptions& o) {
  GG_INTERNAL_CHECK(def.problem_source() == ProblemSource::PointerArray, "not a pointer-array problem");
  CheckReport r = launch_report(e, kernel, def);
  const Node& mm = def.matmul_node();
  const bool a_mn = stored_transposed(def, def.node(mm.operands[0])), b_mn = stored_transposed(def, def.node(mm.operands[1]));
  const rt::ElemType in = runtime_elem(def.input_dtype()), out = runtime_elem(def.output_dtype());
  const std::vector<int64_t> sizes = group_sizes_or_planned(o.group_sizes, def);
  const auto size = [&](int64_t g, int d) { return std::max<int64_t>(0, sizes[size_t(3 * g + d)]); };

  // Every group in allocations of its own, D poisoned with its padding. Timed runs keep the rows
  // dense (16-byte rounded): a padded pitch off the 128-byte lines slows TMA and cuBLAS unevenly.
  const bool padded = !o.bench;
  std::vector<GroupMatrix> a, b;
  std::vector<rt::DeviceBuffer> d, cublas_d;
  std::vector<const void*> a_ptrs, b_ptrs;
  std::vector<void*> d_ptrs;
  std::vector<long long> lda, ldb, ldd;
  std::vector<int> group_sizes;
  for (int64_t g = 0; g < def.batch(); ++g) {
    const int64_t m = size(g, 0), n = size(g, 1), k = size(g, 2);
    a.push_back(make_matrix(in, m, k, a_mn, g, padded, o.exact, o.seed + uint64_t(2 * g)));
    b.push_back(make_matrix(in, n, k, b_mn, g, padded, o.exact, o.seed + uint64_t(2 * g + 1)));
    ldd.push_back(padded_ld(n, g, padded));
    d.emplace_back(out, size_t(std::max<int64_t>(1, m * ldd.back())));
    rt::fill_poison(d.back());
    cublas_d.emplace_back(out, d.back().count());
    rt::fill_poison(cublas_d.back());
    a_ptrs.push_back(a.back().buffer.data());
    b_ptrs.push_back(b.back().buffer.data());
    d_ptrs.push_back(d.back().data());
    lda.push_back(a.back().ld);
    ldb.push_back(b.back().ld);
    for (int dim = 0; dim < 3; ++dim) group_sizes.push_back(int(sizes[size_t(3 * g + dim)]));
  }
  const rt::DeviceBytes a_array(a_ptrs), b_array(b_ptrs), d_array(d_ptrs), lda_array(lda), ldb_array(ldb),
      ldd_array(ldd), sizes_array(group_sizes);

  rt::GemmProblem problem;
  problem.m = def.m();
  problem.n = def.n();
  problem.k = def.k();
  problem.in_type = in;
  problem.out_type = out;
  problem.layouts = rt::resolve_layouts(e.launch.layouts, def.m(), def.n(), def.k());
  problem.groups.a = a_array.as<const void*>();
  problem.groups.b = b_array.as<const void*>();
  problem.groups.d = d_array.as<void*>();
  problem.groups.sizes = sizes_array.as<int>();
  problem.groups.lda = lda_array.as<long long>();
  problem.groups.ldb = ldb_array.as<long long>();
  problem.groups.ldd = ldd_array.as<long long>();
  kernel.launch_and_wait(problem);

  // cuBLAS, one call per group on its own allocations; a group with no K is zeros.
  rt::CublasReference cublas;
  const auto cublas_all = [&] {
    for (int64_t g = 0; g < def.batch(); ++g) {
      const int64_t m = size(g, 0), n = size(g, 1), k = size(g, 2);
      if (m == 0 || n == 0) continue;
      if (k == 0) {
        rt::check_cuda(cudaMemset2D(cublas_d[size_t(g)].data(), size_t(ldd[size_t(g)] * rt::elem_bytes(out)), 0,
                                    size_t(n * rt::elem_bytes(out)), size_t(m)),
                       "zeroing a group with no K");
        continue;
      }
      rt::MatrixLayouts l;
      l.a_mn_major = a_mn;
      l.b_mn_major = b_mn;
      l.lda = lda[size_t(g)];
      l.ldb = ldb[size_t(g)];
      l.ldd = ldd[size_t(g)];
      cublas.gemm(a_ptrs[size_t(g)], b_ptrs[size_t(g)], cublas_d[size_t(g)].data(), in, out, m, n, k, l);
    }
  };
  cublas_all();
  rt::check_cuda(cudaDeviceSynchronize(), "waiting for cuBLAS");

  std::vector<double> ref, mine, theirs;
  size_t padding_written = 0;
  r.unwritten = 0;
  r.checked_rows = 0;
  std::vector<std::vector<float>> ours(size_t(def.batch()));
  for (int64_t g = 0; g < def.batch(); ++g) {
    const int64_t m = size(g, 0), n = size(g, 1), k = size(g, 2), ld = ldd[size_t(g)];
    ours[size_t(g)] = d[size_t(g)].download();
    const std::vector<float>& got = ours[size_t(g)];
    const std::vector<float> want_cublas = cublas_d[size_t(g)].download();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ld; ++j) {
        const float v = got[size_t(i * ld + j)];
        if (j < n) r.unwritten += std::isnan(v);
        else padding_written += !std::isnan(v);
      }
    if (m == 0 || n == 0) continue;
    const rt::HostReference host = rt::host_gemm_reference(a[size_t(g)].host, b[size_t(g)].host, m, n, k);
    r.checked_rows += host.rows.size();
    for (size_t i = 0; i < host.rows.size(); ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = size_t(host.rows[i] * ld + j);
        ref.push_back(host.values[i * size_t(n) + size_t(j)]);
        mine.push_back(got[at]);
        theirs.push_back(want_cublas[at]);
      }
  }
  std::ostringstream why;
  if (r.unwritten) why << r.unwritten << " output elements never written; ";
  if (padding_written) why << padding_written << " elements between a group's rows of D (its ldd) overwritten; ";
  why << judge_errors(r, mine, ref, theirs, def.output_dtype(), o.exact);
  for (int i = 0; i < o.repeat; ++i) {  // the same bits every launch
    for (auto& buffer : d) rt::fill_poison(buffer);
    kernel.launch_and_wait(problem);
    ++r.repeats;
    bool same = true;
    for (int64_t g = 0; g < def.batch(); ++g) same = same && rt::same_bits(d[size_t(g)].download(), ours[size_t(g)]);
    r.repeats_differing += !same;
  }
  if (r.repeats_differing)
    why << r.repeats_differing << " of " << r.repeats << " repeated launches differ from the first; ";
  r.verdict = why.str().empty() ? "ok" : why.str();
  r.passed = r.verdict == "ok";

  if (o.bench && r.passed) {
    // A launch (the map builder and the kernel) against the loop of cuBLAS calls, then against
    // cuBLAS's grouped call, each interleaved; the faster baseline is the one reported.
    const auto times = rt::interleaved_median_ms([&] { kernel.launch(problem); }, cublas_all, o.warmup, o.reps);
    r.ms = times.ours_ms;
    r.cublas_ms = times.reference_ms;
    r.baseline = "a loop of cublasGemmEx calls, one per group (" + std::to_string(times.reference_ms) + " ms)";
    std::vector<rt::CublasReference::GroupedProblem> grouped;
    for (int64_t g = 0; g < def.batch(); ++g)
      grouped.push_back({a_ptrs[size_t(g)], b_ptrs[size_t(g)], cublas_d[size_t(g)].data(), size(g, 0), size(g, 1),
                         size(g, 2), lda[size_t(g)], ldb[size_t(g)], ldd[size_t(g)]});
    try {
      rt::DeviceBuffer pointers(rt::ElemType::F32, size_t(6 * def.batch()));  // 3 x groups 8-byte pointers
      const auto call = [&] {
        cublas.gemm_grouped(grouped, in, out, a_mn, b_mn, static_cast<void**>(pointers.data()));
      };
      const auto vs_grouped = rt::interleaved_median_ms([&] { kernel.launch(problem); }, call, o.warmup, o.reps);
      r.baseline += "; cublasGemmGroupedBatchedEx " + std::to_string(vs_grouped.reference_ms) + " ms";
      if (vs_grouped.reference_ms < r.cublas_ms) {
        r.cublas_ms = vs_grouped.reference_ms;
        r.ms = vs_grouped.ours_ms;
        r.baseline += " (the faster: reported)";
      }
    } catch (const std::exception& failure) {
      std::string message = failure.what();
      std::replace(message.begin(), message.end(), '"', '\'');  // the report goes into JSON too
      r.baseline += "; cublasGemmGroupedBatchedEx failed: " + message;
    }
    double flop = 0;
    for (int64_t g = 0; g < def.batch(); ++g) flop += 2.0 * double(size(g, 0)) * double(size(g, 1)) * double(size(g, 2));
    r.tflops = flop / (r.ms * 1e9);
    r.cublas_tflops = flop / (r.cublas_ms * 1e9);
  }
  return r;
}

}  // namespace gg
