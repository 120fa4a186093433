#pragma once
// The tensor-expression IR: what to compute. Inputs A[M,K] and B[N,K], their product with
// fp32 accumulation, then elementwise epilogue ops, held as a DAG (dsl/graph).
#include <cstdint>
#include <string>
#include <vector>

#include "dsl/dtype.h"
#include "dsl/graph.h"

namespace gg {

// Which dimension of an operand is contiguous in memory. K-major is the only one lowered
// today; MN-major is recorded so that an MN-major B can follow.
enum class Layout { KMajor, MNMajor };

enum class OpKind { Input, Matmul, Scale, AddScaled, AddBias, Relu, Gelu, Silu, Cast };

// How the output [M,N] lies in memory: rows contiguous (D[m * N + n]) or columns contiguous
// (D[n * M + m]). A column-major output is what computing D^T = B * A^T in place of D needs.
enum class OutputLayout { RowMajor, ColumnMajor };

// A bias vector is indexed by the output row (one value per m) or column (one per n).
enum class BiasAlong { Rows, Cols };

std::string_view op_name(OpKind k);
bool op_is_elementwise(OpKind k);

struct Node {
  int id = -1;
  OpKind kind = OpKind::Input;
  std::string name;              // unique within the definition: "A", "acc", "relu", ...
  DType dtype = DType::F32;
  std::vector<int64_t> shape;    // inputs and matmul: [rows, cols]; bias: [len]
  Layout layout = Layout::KMajor;
  double scalar = 0.0;           // Scale: alpha; AddScaled: beta
  BiasAlong bias_along = BiasAlong::Cols;
  std::vector<int> operands;     // node ids, in order
};

class Definition;

// A handle to one node of a Definition.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Definition* def, int id) : def_(def), id_(id) {}
  int id() const { return id_; }
  Definition* definition() const { return def_; }
  const Node& node() const;
  const std::string& name() const { return node().name; }

 private:
  Definition* def_ = nullptr;
  int id_ = -1;
};

class Definition {
 public:
  Definition() = default;
  Definition(const Definition& other);
  Definition& operator=(const Definition& other);

  Tensor input(const std::string& name, std::vector<int64_t> shape, DType dtype, Layout layout = Layout::KMajor);
  Tensor matmul(Tensor a, Tensor b);  // a: [M,K], b: [N,K] -> fp32 [M,N] named "acc"
  Tensor scale(Tensor x, double alpha);
  Tensor add_scaled(Tensor x, Tensor c, double beta);  // x + beta * c, c: [M,N]
  Tensor add_bias(Tensor x, Tensor bias, BiasAlong along);
  Tensor relu(Tensor x);
  Tensor gelu(Tensor x);  // tanh form
  Tensor silu(Tensor x);
  Tensor cast(Tensor x, DType to);
  void set_output(Tensor out, OutputLayout layout = OutputLayout::RowMajor);
  OutputLayout output_layout() const { return output_layout_; }

  int size() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const;
  const Node* find(const std::string& name) const;  // nullptr when absent
  Tensor tensor(int id) { return Tensor(this, id); }
  int output() const;  // CompileError `no-output` when unset
  const Node& matmul_node() const;  // CompileError `no-matmul` when absent
  int64_t m() const;
  int64_t n() const;
  int64_t k() const;
  DType input_dtype() const;   // of A (and B)
  DType output_dtype() const;  // of the output node

  // The epilogue ops between the matmul and the output, in topological order.
  std::vector<int> epilogue() const;
  std::vector<int> topological_order() const { return graph_.topological_order(); }
  std::vector<int> producers(int id) const { return graph_.producers(id); }
  std::vector<int> consumers(int id) const { return graph_.consumers(id); }
  bool depends_on(int consumer, int producer) const { return graph_.reaches(producer, consumer); }

  std::string to_string() const;

 private:
  Tensor add(Node node);
  const Node& checked(Tensor t, const char* op) const;
  std::string unique_name(const std::string& base) const;

  std::vector<Node> nodes_;
  Dag graph_;
  int output_ = -1;
  OutputLayout output_layout_ = OutputLayout::RowMajor;
};

// A 2-D tensor's rows in memory: their length in elements (the last extent of the shape, so K
// for the K-major operands, N for the output) and whether that many bytes is the 16-byte
// multiple a TMA tensor map needs as its row stride.
int64_t row_elems(const Node& n);
bool tma_rows_aligned(const Node& n);
// Whether a TMA store can write the output: 16-byte aligned rows, and row-major (a column-major
// output is stored from registers).
bool tma_storable_output(const Definition& def);
// What `auto` asks of a tensor: TMA can load it (an operand) or store it (the output).
bool tma_can_copy(const Definition& def, const std::string& tensor);
// "a row of K=71 bf16 elements is 142 bytes"
std::string row_bytes_text(const Definition& def, const Node& n);

// The usual definition: D[M,N] = cast(A[M,K] * B[N,K]^T) with `in` operands and `out` result.
Definition make_gemm(int64_t m, int64_t n, int64_t k, DType in, DType out);

}  // namespace gg
