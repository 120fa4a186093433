#pragma once
// A schedule is data: this is its text form. One directive per line, the primitive's name
// followed by its arguments, `#` comments and blank lines ignored:
//
//   tile 128 128 64
//   bind k_o serial
//   cache_read A tma
//   cache_write cast shared tma
//   circular_buffer k_o 4 3
//   warp_specialize 40 232
//   persist m_o n_o tile row 8          # or hilbert (its GROUP is accepted and ignored)
//   mma 64 128 16 sm_90a
//
// A schedule file may also carry what the CLI needs to build the definition: `epilogue`
// lines (applied in order between the matmul and the final cast) and one `problem` line
// of defaults that command-line flags override:
//
//   problem m=8192 n=8192 k=8192 dtype=bf16 out=bf16
//
// (`orientation=swapped` on the problem line: the caller's problem computed as D^T = B * A^T,
// which the directives then schedule; the planner chooses it for a skinny M.)
//   epilogue scale 2.0        # acc * 2
//   epilogue add_c 0.5        # + 0.5 * C   (C: [M,N] input)
//   epilogue bias cols        # + Bias[n]   (Bias: [N] input; `rows`: Bias[m], [M])
//   epilogue relu             # or gelu, silu
//
// Parse errors are CompileError `parse-error` naming the line, the offending text and what
// was expected; a directive that parses but cannot be applied keeps its primitive's rule id
// and gains a `line N:` prefix.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/definition.h"
#include "dsl/schedule.h"

namespace gg {

// One epilogue op of a schedule file, between the matmul and the final cast.
struct EpilogueSpec {
  OpKind kind = OpKind::Relu;  // Scale, AddScaled, AddBias, Relu, Gelu, Silu or ActGrad
  double scalar = 0.0;         // Scale: alpha; AddScaled: beta
  BiasAlong along = BiasAlong::Cols;
  OpKind activation = OpKind::Relu;  // ActGrad (drelu, dgelu, dsilu): whose derivative
  // `epilogue save`: no op; the value so far is also stored, to a second output PreAct laid out as
  // D (Definition::set_saved_output)
  bool save = false;
  // `epilogue rowsum | rowsumsq | colsum | colsumsq`: no op; the values so far are reduced into a
  // side vector (Definition::add_reduction)
  bool reduce = false;
  ReduceAlong reduce_along = ReduceAlong::Rows;
  ReduceOp reduce_op = ReduceOp::Sum;
  static EpilogueSpec reduction(ReduceAlong along, ReduceOp op) {
    EpilogueSpec e;
    e.reduce = true;
    e.reduce_along = along;
    e.reduce_op = op;
    return e;
  }
  bool operator==(const EpilogueSpec&) const = default;
};

// Problem defaults from a `problem` line; unset fields fall back to the caller's defaults.
struct ProblemSpec {
  std::optional<int64_t> m, n, k;
  std::optional<DType> dtype, out;
  std::optional<OutputLayout> d_layout;  // d_major=n (row-major, the default) or m (column-major)
  std::optional<Layout> a_layout, b_layout;  // a_major=k|m, b_major=k|n
  std::optional<int64_t> lda, ldb, ldd, batch;
  std::optional<int64_t> stride_a, stride_b, stride_d;  // elements between matrices; 0 broadcasts A or B
  std::optional<bool> swapped;  // orientation=swapped: computed as D^T = B * A^T (Definition::swapped)
  std::optional<std::string> compiled;  // compiled=nk: the sizes not named are read at run time
  std::optional<ProblemSource> source;  // source=masked: the batch's matrices are masked groups
  // scale_a=1x128, scale_b=128x128 (or tensor, row, none): FP8 operands' scale factors, as
  // parse_scale_spec spells them (a two-dimensional one's major after a colon: 1x128:k); "none" for no factors.
  std::optional<std::string> scale_a, scale_b;
  std::optional<bool> symmetric;  // symmetric=1: D = A * A^T, A read as both operands
  std::optional<std::string> stage;  // stage=a|b|ab: operands read through an aligned copy (Definition::stage_operand)
  bool operator==(const ProblemSpec&) const = default;
};

struct ScheduleFile {
  ProblemSpec problem;
  std::vector<EpilogueSpec> epilogue;
  std::vector<Directive> directives;
  std::vector<int> directive_lines;  // 1-based source line of each directive (same length)
};

// A tile order's word in the text form (`persist ... row|column|hilbert`), and back; nullopt
// for any other word.
std::string_view raster_name(Raster r);
std::optional<Raster> raster_of_name(std::string_view name);

// The text of one directive, e.g. "split m_i 64 m_wg m_mma".
std::string print_directive(const Directive& d);
// The directive list, one per line.
std::string print_directives(const std::vector<Directive>& ds);
// A complete schedule file: a `problem` line and `epilogue` lines describing the schedule's
// definition (when it is a GEMM of make_definition's form; otherwise a comment says so),
// then the directives. parse_schedule_file() reads it back to the same directives.
std::string print_schedule(const Schedule& s);

// Parses one directive line (no comment, not blank). CompileError `parse-error`.
Directive parse_directive(std::string_view line);
// Parses a whole file (a leading UTF-8 byte order mark is skipped). CompileError `parse-error`
// (or the rule of a bad dtype/binding/arch name) with a `line N:` prefix; `empty-schedule`
// without any directive; `too-many-directives` past these counts. A real schedule holds tens
// of each; `explain` prints the state after every directive, epilogue included, so its output
// grows with their product.
constexpr size_t kMaxDirectives = 10000;
constexpr size_t kMaxEpilogueOps = 1000;
ScheduleFile parse_schedule_file(std::string_view text);

// The GEMM D = cast(epilogue(A[M,K] * B[N,K]^T)) with inputs A, B and, as the epilogue
// needs them, C ([M,N], dtype `out`) for add_c and Bias ([N] or [M], dtype `out`) for bias.
// The epilogue ops are named by Definition: scale, add_c, bias, relu, gelu, silu, cast
// (a repeated op gets a numeric suffix: relu1). `swapped`: the same problem in the swapped
// orientation, D^T = B * A^T (Definition::swapped), with the layout exchanged by swapped_layout.
Definition make_definition(int64_t m, int64_t n, int64_t k, DType in, DType out,
                           const std::vector<EpilogueSpec>& epilogue = {}, const ProblemLayout& layout = {},
                           bool swapped = false);
// The same GEMM (epilogue, layout, orientation, run-time sizes) at other M and N, both in the
// definition's own orientation: the problem a kernel that reads them at run time computes when
// launched with those sizes. `def` must be of make_definition's form (InternalError otherwise).
Definition resized_definition(const Definition& def, int64_t m, int64_t n);
// "n" -> row-major (n contiguous), "m" -> column-major; CompileError `parse-error` otherwise.
OutputLayout parse_d_major(std::string_view text);
// An operand's major: "k", or `mn` ("m" for A, "n" for B); CompileError `parse-error` otherwise.
Layout parse_operand_major(std::string_view text, std::string_view operand, std::string_view mn);

// The epilogue of a definition built like make_definition's, or nullopt when the definition
// has another shape (then print_schedule cannot describe it in a file).
std::optional<std::vector<EpilogueSpec>> epilogue_specs_of(const Definition& def);

// Replays `directives` through Schedule::apply, so each one is validated as if called in
// code. When `lines` is given (one per directive), errors gain a `line N:` prefix.
Schedule apply_directives(const Definition& def, const std::vector<Directive>& directives,
                          const std::vector<int>& lines = {});

}  // namespace gg
