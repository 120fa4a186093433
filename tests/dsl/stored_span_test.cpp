// The extents a tensor spans in memory, which the overlap check and simulate's budget read.
#include <doctest/doctest.h>

#include "dsl/definition.h"
#include "dsl/schedule_text.h"

using namespace gg;

TEST_CASE("matrix_span and stored_span count leading dimensions and batch strides") {
  const Definition dense = make_definition(128, 64, 32, DType::BF16, DType::BF16);
  const Node& a = dense.node(dense.matmul_node().operands[0]);
  CHECK(matrix_span(dense, a) == 128 * 32);
  CHECK(stored_span(dense, a) == 128 * 32);

  // The last row ends at its length, not at the leading dimension.
  ProblemLayout l{.lda = 40, .ldd = 80, .batch = 3, .stride_a = 0, .stride_d = 20000};
  const Definition strided = make_definition(128, 64, 32, DType::BF16, DType::BF16, {}, l);
  const Node& sa = strided.node(strided.matmul_node().operands[0]);
  const Node& sd = strided.node(strided.output());
  CHECK(matrix_span(strided, sa) == 127 * 40 + 32);
  CHECK(stored_span(strided, sa) == 127 * 40 + 32);  // broadcast: one matrix
  CHECK(matrix_span(strided, sd) == 127 * 80 + 64);
  CHECK(stored_span(strided, sd) == 2 * 20000 + 127 * 80 + 64);
  // Dense batches lie one matrix after another.
  const Node& sb = strided.node(strided.matmul_node().operands[1]);
  CHECK(stored_span(strided, sb) == 3 * 64 * 32);
}
