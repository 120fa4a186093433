#pragma once
// Integer index expressions of the kernel IR (tile coordinates, loop bounds, predicates).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace gg::kir {

enum class ExprKind { Int, Var, Add, Sub, Mul, Div, Mod, Min, Lt, Ge, Eq, And };

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::Int;
  int64_t value = 0;  // Int
  std::string name;   // Var
  ExprPtr a, b;       // operands of the binary kinds
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
ExprPtr ceil_div(ExprPtr a, ExprPtr b);

// The value of `e` with its variables bound; InternalError for an unbound variable.
int64_t evaluate(const ExprPtr& e, const std::map<std::string, int64_t>& vars);

// C syntax; constants fold, so `var("k") * imm(1)` prints as `k`.
std::string to_c(const ExprPtr& e);
bool is_const(const ExprPtr& e, int64_t* value = nullptr);

}  // namespace gg::kir
