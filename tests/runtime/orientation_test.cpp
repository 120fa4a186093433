// The planner's swapped orientation at the launch: a swapped kernel's launches take the caller's
// problem and exchange A and B, M and N and the layouts, so the stored matrices the tensor maps
// describe are the same memory either way.
#include <doctest/doctest.h>

#include "runtime/launch.h"

using namespace gg::rt;

namespace {

MatrixLayouts ragged_layouts() {
  MatrixLayouts l;
  l.a_mn_major = true;
  l.lda = 72;
  l.ldb = 136;
  l.ldd = 4104;
  l.ldc = 4104;
  l.batch = 3;
  l.stride_a = 0;
  l.stride_b = 9000;
  l.stride_d = 123456;
  return l;
}

bool same(const MatrixLayouts& x, const MatrixLayouts& y) { return layout_differences(x, y).empty() &&
                                                                   x.a_mn_major == y.a_mn_major &&
                                                                   x.b_mn_major == y.b_mn_major &&
                                                                   x.d_column_major == y.d_column_major; }

}  // namespace

TEST_CASE("exchange_operands trades A's and B's layouts, flips D's major and is its own inverse") {
  const MatrixLayouts l = ragged_layouts();
  const MatrixLayouts x = exchange_operands(l);
  CHECK(x.b_mn_major);
  CHECK_FALSE(x.a_mn_major);
  CHECK(x.d_column_major);
  CHECK(x.lda == 136);
  CHECK(x.ldb == 72);
  CHECK(x.stride_a == 9000);
  CHECK(x.stride_b == 0);
  CHECK(x.ldd == 4104);
  CHECK(x.stride_d == 123456);
  CHECK(same(exchange_operands(x), l));
}

TEST_CASE("swap_orientation maps the caller's problem onto a swapped kernel's, with the same stored matrices") {
  LaunchSpec spec;
  spec.swapped = true;
  spec.layouts = exchange_operands(ragged_layouts());
  CHECK(same(caller_layouts(spec), ragged_layouts()));
  int a = 0, b = 0, d = 0;
  GemmProblem caller;
  caller.a = &a;
  caller.b = &b;
  caller.d = &d;
  caller.m = 16;
  caller.n = 4096;
  caller.k = 64;
  caller.layouts = ragged_layouts();
  const GemmProblem kernel = swap_orientation(spec, caller);
  CHECK(kernel.a == &b);
  CHECK(kernel.b == &a);
  CHECK(kernel.d == &d);
  CHECK(kernel.m == 4096);
  CHECK(kernel.n == 16);
  CHECK(kernel.k == 64);
  CHECK(same(kernel.layouts, spec.layouts));
  // The kernel's A is the caller's B, stored the same way; its D the caller's D, read transposed.
  const StoredMatrix caller_b = stored_matrix(caller.layouts, Operand::B, caller.m, caller.n, caller.k);
  const StoredMatrix kernel_a = stored_matrix(kernel.layouts, Operand::A, kernel.m, kernel.n, kernel.k);
  CHECK(kernel_a.rows == caller_b.rows);
  CHECK(kernel_a.cols == caller_b.cols);
  CHECK(kernel_a.row_stride == caller_b.row_stride);
  CHECK(kernel_a.batch_stride == caller_b.batch_stride);
  CHECK(kernel_a.transposed == caller_b.transposed);
  const StoredMatrix caller_d = stored_matrix(caller.layouts, Operand::D, caller.m, caller.n, caller.k);
  const StoredMatrix kernel_d = stored_matrix(kernel.layouts, Operand::D, kernel.m, kernel.n, kernel.k);
  CHECK(kernel_d.rows == caller_d.rows);
  CHECK(kernel_d.cols == caller_d.cols);
  CHECK(kernel_d.row_stride == caller_d.row_stride);
  CHECK(kernel_d.transposed != caller_d.transposed);
  // Back again, and a straight kernel leaves the problem alone.
  const GemmProblem back = swap_orientation(spec, kernel);
  CHECK(back.a == &a);
  CHECK(back.m == 16);
  CHECK(same(back.layouts, caller.layouts));
  spec.swapped = false;
  CHECK(swap_orientation(spec, caller).a == &a);
  CHECK(swap_orientation(spec, caller).m == 16);
}
