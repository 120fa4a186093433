#include "codegen/expr.h"

#include <algorithm>
#include <numeric>

#include "dsl/error.h"
#include "runtime/device/smem_desc.h"
#include "runtime/device/tcgen05_desc.h"
#include "runtime/device/tile_order.h"

namespace gg::kir {

ExprPtr imm(int64_t v) { return std::make_shared<Expr>(Expr{ExprKind::Int, v, "", nullptr, nullptr}); }
ExprPtr var(const std::string& name) { return std::make_shared<Expr>(Expr{ExprKind::Var, 0, name, nullptr, nullptr}); }

bool is_const(const ExprPtr& e, int64_t* value) {
  GG_INTERNAL_CHECK(e != nullptr, "null expression");
  if (e->kind != ExprKind::Int) return false;
  if (value) *value = e->value;
  return true;
}

namespace {
ExprPtr binary(ExprKind k, ExprPtr a, ExprPtr b) {
  int64_t x = 0, y = 0;
  bool ca = is_const(a, &x), cb = is_const(b, &y);
  if (ca && cb) {
    switch (k) {
      case ExprKind::Add: return imm(x + y);
      case ExprKind::Sub: return imm(x - y);
      case ExprKind::Mul: return imm(x * y);
      case ExprKind::Div: GG_INTERNAL_CHECK(y != 0, "division by zero"); return imm(x / y);
      case ExprKind::Mod: GG_INTERNAL_CHECK(y != 0, "modulo by zero"); return imm(x % y);
      case ExprKind::Min: return imm(std::min(x, y));
      case ExprKind::Max: return imm(std::max(x, y));
      case ExprKind::Lt: return imm(x < y);
      case ExprKind::Ge: return imm(x >= y);
      case ExprKind::Eq: return imm(x == y);
      case ExprKind::And: return imm(x && y);
      default: break;
    }
  }
  if (k == ExprKind::Add && ca && x == 0) return b;
  if ((k == ExprKind::Add || k == ExprKind::Sub) && cb && y == 0) return a;
  if (k == ExprKind::Mul && ((ca && x == 0) || (cb && y == 0))) return imm(0);
  if (k == ExprKind::Mul && ca && x == 1) return b;
  if ((k == ExprKind::Mul || k == ExprKind::Div) && cb && y == 1) return a;
  if (k == ExprKind::Mod && cb && y == 1) return imm(0);
  if (k == ExprKind::And && ca) return x ? b : imm(0);
  if (k == ExprKind::And && cb) return y ? a : imm(0);
  return std::make_shared<Expr>(Expr{k, 0, "", std::move(a), std::move(b)});
}
}  // namespace

ExprPtr operator+(ExprPtr a, ExprPtr b) { return binary(ExprKind::Add, std::move(a), std::move(b)); }
ExprPtr operator-(ExprPtr a, ExprPtr b) { return binary(ExprKind::Sub, std::move(a), std::move(b)); }
ExprPtr operator*(ExprPtr a, ExprPtr b) { return binary(ExprKind::Mul, std::move(a), std::move(b)); }
ExprPtr operator/(ExprPtr a, ExprPtr b) { return binary(ExprKind::Div, std::move(a), std::move(b)); }
ExprPtr operator%(ExprPtr a, ExprPtr b) { return binary(ExprKind::Mod, std::move(a), std::move(b)); }
ExprPtr operator<(ExprPtr a, ExprPtr b) { return binary(ExprKind::Lt, std::move(a), std::move(b)); }
ExprPtr operator>=(ExprPtr a, ExprPtr b) { return binary(ExprKind::Ge, std::move(a), std::move(b)); }
ExprPtr operator==(ExprPtr a, ExprPtr b) { return binary(ExprKind::Eq, std::move(a), std::move(b)); }
ExprPtr operator&&(ExprPtr a, ExprPtr b) { return binary(ExprKind::And, std::move(a), std::move(b)); }
ExprPtr min(ExprPtr a, ExprPtr b) { return binary(ExprKind::Min, std::move(a), std::move(b)); }
ExprPtr max(ExprPtr a, ExprPtr b) { return binary(ExprKind::Max, std::move(a), std::move(b)); }
ExprPtr ceil_div(ExprPtr a, ExprPtr b) { return (a + b - imm(1)) / b; }

int64_t call_device_helper(const std::string& helper, int64_t a, int64_t b) {
  if (helper == "gg::dev::swizzle_offset") return gg::dev::swizzle_offset(static_cast<unsigned>(a), static_cast<int>(b));
  if (helper == "gg::dev::tmem_lane_row") return gg::dev::tmem_lane_row(static_cast<int>(a), static_cast<int>(b));
  if (helper == "gg::dev::hilbert_dims") {
    GG_INTERNAL_CHECK(a >= 1 && a <= gg::dev::kHilbertMaxTiles && b >= 1 && b <= gg::dev::kHilbertMaxTiles,
                      helper + "(" + std::to_string(a) + ", " + std::to_string(b) + "): tile counts out of range");
    return gg::dev::hilbert_dims(static_cast<int>(a), static_cast<int>(b));
  }
  if (helper == "gg::dev::hilbert_tile_m" || helper == "gg::dev::hilbert_tile_n") {
    const int64_t tiles_m = b / 65536, tiles_n = b % 65536;
    GG_INTERNAL_CHECK(tiles_m >= 1 && tiles_m <= gg::dev::kHilbertMaxTiles && tiles_n >= 1 &&
                          tiles_n <= gg::dev::kHilbertMaxTiles && a >= 0 && a < tiles_m * tiles_n,
                      helper + "(" + std::to_string(a) + ", " + std::to_string(b) + "): tile or dims out of range");
    const int tile = static_cast<int>(a), dims = static_cast<int>(b);
    return helper == "gg::dev::hilbert_tile_m" ? gg::dev::hilbert_tile_m(tile, dims) : gg::dev::hilbert_tile_n(tile, dims);
  }
  if (helper == "gg::dev::triangle_dims") {
    GG_INTERNAL_CHECK(a >= 1 && a <= gg::dev::kHilbertMaxTiles && b >= 16 && b < 65536 && b % 16 >= 1,
                      helper + "(" + std::to_string(a) + ", " + std::to_string(b) + "): tiles, group or ratio out of range");
    return gg::dev::triangle_dims(static_cast<int>(a), static_cast<int>(b));
  }
  if (helper == "gg::dev::triangle_tile_m" || helper == "gg::dev::triangle_tile_n") {
    // An index past the grid is asked about too (a dealt loop's look at the units past its end, which
    // it multiplies by 0): the device answers (0, 0) there, and so does its twin.
    const int64_t tiles = b / 65536;
    GG_INTERNAL_CHECK(tiles >= 1 && b % 16 >= 1 && b % 65536 >= 16 && a >= 0 && a <= INT32_MAX,
                      helper + "(" + std::to_string(a) + ", " + std::to_string(b) + "): tile or dims out of range");
    const int tile = static_cast<int>(a), dims = static_cast<int>(b);
    return helper == "gg::dev::triangle_tile_m" ? gg::dev::triangle_tile_m(tile, dims)
                                                : gg::dev::triangle_tile_n(tile, dims);
  }
  if (helper == "gg::dev::triangle_computes") {
    GG_INTERNAL_CHECK(b / 65536 >= 1 && b % 16 >= 1 && a >= 0 && a <= INT32_MAX,
                      helper + "(" + std::to_string(a) + ", " + std::to_string(b) + "): tile or dims out of range");
    return gg::dev::triangle_computes(static_cast<int>(a), static_cast<int>(b));
  }
  GG_INTERNAL_CHECK(false, "no host twin of device helper " + helper);
}

std::string helper_header(const std::string& helper) {
  if (helper == "gg::dev::swizzle_offset") return "smem_desc.h";
  if (helper == "gg::dev::tmem_lane_row") return "tcgen05_desc.h";
  if (helper == "gg::dev::hilbert_tile_m" || helper == "gg::dev::hilbert_tile_n" || helper == "gg::dev::hilbert_dims" ||
      helper == "gg::dev::triangle_tile_m" || helper == "gg::dev::triangle_tile_n" || helper == "gg::dev::triangle_dims" ||
      helper == "gg::dev::triangle_computes")
    return "tile_order.h";
  GG_INTERNAL_CHECK(false, "no header for device helper " + helper);
}

void called_helpers(const ExprPtr& e, std::set<std::string>& helpers) {
  if (!e) return;
  if (e->kind == ExprKind::Call) helpers.insert(e->name);
  called_helpers(e->a, helpers);
  called_helpers(e->b, helpers);
}

ExprPtr wide(ExprPtr a) {
  if (is_const(a)) return a;
  return std::make_shared<Expr>(Expr{ExprKind::Wide, 0, "", std::move(a), nullptr});
}

ExprPtr narrow(ExprPtr a) {
  if (is_const(a)) return a;
  return std::make_shared<Expr>(Expr{ExprKind::Narrow, 0, "", std::move(a), nullptr});
}

ExprPtr load(const std::string& array, ExprPtr index) {
  return std::make_shared<Expr>(Expr{ExprKind::Load, 0, array, std::move(index), nullptr});
}

std::string element_name(const std::string& array, int64_t index) {
  return array + "[" + std::to_string(index) + "]";
}

ExprPtr substitute(const ExprPtr& e, const std::string& name, const ExprPtr& value) {
  if (!e) return e;
  if (e->kind == ExprKind::Var) return e->name == name ? value : e;
  if (e->kind == ExprKind::Int) return e;
  ExprPtr a = substitute(e->a, name, value), b = substitute(e->b, name, value);
  if (a.get() == e->a.get() && b.get() == e->b.get()) return e;  // pointers: operator== builds IR
  switch (e->kind) {
    case ExprKind::Wide: return wide(a);
    case ExprKind::Narrow: return narrow(a);
    case ExprKind::Load: return load(e->name, a);
    case ExprKind::Call: return call(e->name, a, b);
    default: return binary(e->kind, a, b);
  }
}

ExprPtr exact_quotient(const ExprPtr& e, int64_t divisor) {
  GG_INTERNAL_CHECK(divisor > 0, "exact_quotient by " + std::to_string(divisor));
  if (divisor == 1) return e;
  int64_t c = 0;
  if (is_const(e, &c)) return c % divisor == 0 ? imm(c / divisor) : nullptr;
  switch (e->kind) {
    case ExprKind::Add:
    case ExprKind::Sub: {
      ExprPtr qa = exact_quotient(e->a, divisor), qb = exact_quotient(e->b, divisor);
      if (!qa || !qb) return nullptr;
      return e->kind == ExprKind::Add ? qa + qb : qa - qb;
    }
    case ExprKind::Mul: {
      // A constant factor may carry part of the divisor: (x * 32) / 16 is x * 2.
      for (const auto& [factor, other] : {std::pair{e->b, e->a}, std::pair{e->a, e->b}}) {
        if (!is_const(factor, &c) || c == 0) continue;
        const int64_t g = std::gcd(c, divisor);
        if (ExprPtr q = exact_quotient(other, divisor / g)) return q * imm(c / g);
      }
      if (ExprPtr qa = exact_quotient(e->a, divisor)) return qa * e->b;
      if (ExprPtr qb = exact_quotient(e->b, divisor)) return e->a * qb;
      return nullptr;
    }
    case ExprKind::Mod: {
      // (x % m) / d is (x / d) % (m / d) when d divides both x and m.
      if (!is_const(e->b, &c) || c % divisor != 0) return nullptr;
      ExprPtr qa = exact_quotient(e->a, divisor);
      return qa ? qa % imm(c / divisor) : nullptr;
    }
    default: return nullptr;
  }
}

ExprPtr call(const std::string& helper, ExprPtr a, ExprPtr b) {
  int64_t x = 0, y = 0;
  if (is_const(a, &x) && is_const(b, &y)) return imm(call_device_helper(helper, x, y));
  return std::make_shared<Expr>(Expr{ExprKind::Call, 0, helper, std::move(a), std::move(b)});
}

int64_t evaluate(const ExprPtr& e, const std::map<std::string, int64_t>& vars) {
  GG_INTERNAL_CHECK(e != nullptr, "null expression");
  if (e->kind == ExprKind::Int) return e->value;
  if (e->kind == ExprKind::Var) {
    auto it = vars.find(e->name);
    GG_INTERNAL_CHECK(it != vars.end(), "unbound variable " + e->name);
    return it->second;
  }
  if (e->kind == ExprKind::Wide || e->kind == ExprKind::Narrow) return evaluate(e->a, vars);
  if (e->kind == ExprKind::Load) {
    const std::string element = element_name(e->name, evaluate(e->a, vars));
    auto it = vars.find(element);
    if (it == vars.end()) throw UnboundElement(element);
    return it->second;
  }
  int64_t a = evaluate(e->a, vars), b = evaluate(e->b, vars);
  switch (e->kind) {
    case ExprKind::Add: return a + b;
    case ExprKind::Sub: return a - b;
    case ExprKind::Mul: return a * b;
    case ExprKind::Div: GG_INTERNAL_CHECK(b != 0, "division by zero"); return a / b;
    case ExprKind::Mod: GG_INTERNAL_CHECK(b != 0, "modulo by zero"); return a % b;
    case ExprKind::Min: return std::min(a, b);
    case ExprKind::Max: return std::max(a, b);
    case ExprKind::Lt: return a < b;
    case ExprKind::Ge: return a >= b;
    case ExprKind::Eq: return a == b;
    case ExprKind::And: return a && b;
    case ExprKind::Call: return call_device_helper(e->name, a, b);
    default: GG_INTERNAL_CHECK(false, "unhandled expression kind");
  }
}

std::string to_c(const ExprPtr& e) {
  GG_INTERNAL_CHECK(e != nullptr, "null expression");
  auto bin = [&](const char* op) { return "(" + to_c(e->a) + " " + op + " " + to_c(e->b) + ")"; };
  switch (e->kind) {
    case ExprKind::Int: return std::to_string(e->value);
    case ExprKind::Var: return e->name;
    case ExprKind::Add: return bin("+");
    case ExprKind::Sub: return bin("-");
    case ExprKind::Mul: return bin("*");
    case ExprKind::Div: return bin("/");
    case ExprKind::Mod: return bin("%");
    case ExprKind::Lt: return bin("<");
    case ExprKind::Ge: return bin(">=");
    case ExprKind::Eq: return bin("==");
    case ExprKind::And: return bin("&&");
    case ExprKind::Min: return "min(" + to_c(e->a) + ", " + to_c(e->b) + ")";
    case ExprKind::Max: return "max(" + to_c(e->a) + ", " + to_c(e->b) + ")";
    case ExprKind::Call: return e->name + "(" + to_c(e->a) + ", " + to_c(e->b) + ")";
    case ExprKind::Wide: return "(long long)" + to_c(e->a);
    case ExprKind::Narrow: return "(int)(" + to_c(e->a) + ")";
    case ExprKind::Load: return e->name + "[" + to_c(e->a) + "]";
  }
  GG_INTERNAL_CHECK(false, "unhandled expression kind");
}

}  // namespace gg::kir
