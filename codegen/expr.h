#pragma once
// Integer index expressions of the kernel IR (tile coordinates, loop bounds, predicates).
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace gg::kir {

enum class ExprKind { Int, Var, Add, Sub, Mul, Div, Mod, Min, Max, Lt, Ge, Eq, And, Call, Wide, Narrow, Load };

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::Int;
  int64_t value = 0;  // Int
  std::string name;   // Var; Call: the device helper; Load: the array (a GgGemmArgs field)
  ExprPtr a, b;       // operands of the binary kinds and Call's two arguments; Load: the index
};

ExprPtr imm(int64_t v);
ExprPtr var(const std::string& name);
ExprPtr operator+(ExprPtr a, ExprPtr b);
ExprPtr operator-(ExprPtr a, ExprPtr b);
ExprPtr operator*(ExprPtr a, ExprPtr b);
ExprPtr operator/(ExprPtr a, ExprPtr b);  // floor division of non-negative values
ExprPtr operator%(ExprPtr a, ExprPtr b);
ExprPtr operator<(ExprPtr a, ExprPtr b);
ExprPtr operator>=(ExprPtr a, ExprPtr b);
ExprPtr operator==(ExprPtr a, ExprPtr b);
ExprPtr operator&&(ExprPtr a, ExprPtr b);
ExprPtr min(ExprPtr a, ExprPtr b);
ExprPtr max(ExprPtr a, ExprPtr b);
ExprPtr ceil_div(ExprPtr a, ExprPtr b);
// A call of a runtime/device helper that host code can run too, so the printed kernel and the
// simulator compute it with the same function: "gg::dev::swizzle_offset" (byte offset, swizzle
// bytes), "gg::dev::tmem_lane_row" (MMA rows, TMEM lane), "gg::dev::hilbert_tile_m" and
// "gg::dev::hilbert_tile_n" (Hilbert tile index, gg::dev::hilbert_dims of the tile counts),
// "gg::dev::hilbert_dims" (tiles along m, tiles along n), "gg::dev::triangle_tile_m" and
// "gg::dev::triangle_tile_n" (triangle tile index, gg::dev::triangle_dims), "gg::dev::triangle_dims"
// (tiles along m, gg::dev::triangle_shape of the band and the tile's ratio) and
// "gg::dev::triangle_computes" (triangle tile index, dims: whether it is dealt among the first).
// InternalError for any other.
ExprPtr call(const std::string& helper, ExprPtr a, ExprPtr b);
// The runtime/device header that defines `helper` (one of call()'s), e.g. "tile_order.h".
std::string helper_header(const std::string& helper);
// Every helper `e` calls, added to `helpers`.
void called_helpers(const ExprPtr& e, std::set<std::string>& helpers);
// `a` as a 64-bit integer (printed `(long long)a`), so sums with it are 64-bit in C; values are
// 64-bit on the host already.
ExprPtr wide(ExprPtr a);
// `a` as a 32-bit int (printed `(int)(a)`): a count computed from a 64-bit kernel argument
// (args.m) that the launch bounds, so it mixes with the kernel's int indices.
ExprPtr narrow(ExprPtr a);
// Element `index` of a device array the kernel reads (a 32-bit int array named by its GgGemmArgs
// field, "args.group_rows"), printed `args.group_rows[index]`. The simulator and the sync checker
// bind its elements as variables named element_name(array, i).
ExprPtr load(const std::string& array, ExprPtr index);
std::string element_name(const std::string& array, int64_t index);  // "args.group_rows[3]"
// `e / divisor` with the division carried into `e`'s terms -- (s * 32768 + kk * 32 % 128) / 16 is
// s * 2048 + kk * 2 % 8 -- where every term is provably a multiple of `divisor` (> 0); nullptr
// where one is not. A shared-memory byte offset in 16-byte units this way lets the compiler add
// the constant part to a descriptor instead of shifting each address.
ExprPtr exact_quotient(const ExprPtr& e, int64_t divisor);
// `e` with every use of variable `name` replaced by `value`.
ExprPtr substitute(const ExprPtr& e, const std::string& name, const ExprPtr& value);

// The value of `e` with its variables bound; InternalError for an unbound variable.
int64_t evaluate(const ExprPtr& e, const std::map<std::string, int64_t>& vars);
// A device helper's host twin (runtime/device's host-compilable functions) on two values.
int64_t call_device_helper(const std::string& helper, int64_t a, int64_t b);
// Thrown by evaluate for a Load of an element the bindings lack: a read past a device array
// (the simulator reports it as the kernel's fault).
struct UnboundElement : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// C syntax; constants fold, so `var("k") * imm(1)` prints as `k`.
std::string to_c(const ExprPtr& e);
bool is_const(const ExprPtr& e, int64_t* value = nullptr);

}  // namespace gg::kir
