#include <doctest/doctest.h>

#include "dsl/definition.h"
#include "dsl/error.h"
#include "dsl/graph.h"

using namespace gg;

TEST_CASE("the DAG adapter orders producers before consumers and answers reachability") {
  Dag g;
  int a = g.add_node(), b = g.add_node(), c = g.add_node(), d = g.add_node();
  g.add_edge(b, c);
  g.add_edge(a, c);
  g.add_edge(c, d);
  CHECK(g.topological_order() == std::vector<int>{a, b, c, d});
  CHECK(g.producers(c) == std::vector<int>{b, a});
  CHECK(g.consumers(c) == std::vector<int>{d});
  CHECK(g.reaches(a, d));
  CHECK_FALSE(g.reaches(d, a));
  CHECK(g.reaches(b, b));
  CHECK_THROWS_AS(g.add_edge(d, a), InternalError);  // a cycle is a gemmgen bug, not a user error
}

TEST_CASE("a definition with a fused epilogue is a DAG in creation order") {
  Definition def;
  Tensor a = def.input("A", {256, 64}, DType::BF16);
  Tensor b = def.input("B", {128, 64}, DType::BF16);
  Tensor c = def.input("C", {256, 128}, DType::F32);
  Tensor bias = def.input("Bias", {128}, DType::F32);
  Tensor acc = def.matmul(a, b);
  Tensor y = def.relu(def.add_bias(def.add_scaled(def.scale(acc, 2.0), c, 0.5), bias, BiasAlong::Cols));
  def.set_output(def.cast(y, DType::BF16));
  CHECK(def.m() == 256);
  CHECK(def.n() == 128);
  CHECK(def.k() == 64);
  CHECK(def.output_dtype() == DType::BF16);
  std::vector<std::string> names;
  for (int id : def.epilogue()) names.push_back(def.node(id).name);
  CHECK(names == std::vector<std::string>{"scale", "add_c", "bias", "relu", "cast"});
  CHECK(def.depends_on(def.output(), a.id()));
  CHECK_FALSE(def.depends_on(a.id(), def.output()));
  CHECK(def.node(acc.id()).dtype == DType::F32);
  CHECK(def.to_string().find("acc = matmul(A, B) -> f32") != std::string::npos);
  CHECK(op_is_elementwise(OpKind::Gelu));
  CHECK_FALSE(op_is_elementwise(OpKind::Matmul));
}

TEST_CASE("the B layout is a recorded field") {
  Definition def;
  Tensor b = def.input("B", {128, 64}, DType::BF16, Layout::MNMajor);
  CHECK(b.node().layout == Layout::MNMajor);
}
