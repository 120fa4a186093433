#include "dsl/schedule_text.h"

#include <charconv>
#include <limits>
#include <sstream>

#include "dsl/error.h"

namespace gg {

namespace {

// ---- printing -------------------------------------------------------------------------

std::string number(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  GG_INTERNAL_CHECK(res.ec == std::errc(), "to_chars failed");
  return std::string(buf, res.ptr);
}

std::string_view place_name(Place p) {
  switch (p) {
    case Place::Registers: return "registers";
    case Place::Tmem: return "tmem";
    case Place::Shared: return "shared";
  }
  GG_INTERNAL_CHECK(false, "unhandled place");
}

std::string_view method_name(CopyMethod m) {
  switch (m) {
    case CopyMethod::Sync: return "sync";
    case CopyMethod::Tma: return "tma";
    case CopyMethod::Auto: return "auto";
  }
  GG_INTERNAL_CHECK(false, "unhandled copy method");
}

const std::initializer_list<std::pair<const char*, CopyMethod>> kCopyMethods = {
    {"sync", CopyMethod::Sync}, {"tma", CopyMethod::Tma}, {"auto", CopyMethod::Auto}};

// ---- tokens ---------------------------------------------------------------------------

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

struct Usage {
  const char* name;
  const char* args;
};

constexpr Usage kUsages[] = {
    {"split", "AXIS FACTOR OUTER INNER"},
    {"merge", "OUTER INNER FUSED"},
    {"reorder", "AXIS AXIS..."},
    {"bind", "AXIS BINDING"},
    {"tile", "M N K"},
    {"cache_read", "TENSOR sync|tma|auto"},
    {"cache_write", "TENSOR registers|tmem|shared [sync|tma|auto]"},
    {"inline", "OP"},
    {"compute_at", "OP AXIS"},
    {"circular_buffer", "AXIS STAGES [PREFETCH]"},
    {"warp_specialize", "PRODUCER_REGS CONSUMER_REGS"},
    {"persist", "M_AXIS N_AXIS [FUSED [row|column|hilbert|triangle [GROUP]]]"},
    {"cluster", "X [Y [Z]]"},
    {"multicast", "OPERAND"},
    {"mma", "M N K [sm_90a|sm_100a]"},
    {"ping_pong", ""},
    {"store_subtile", "COLS [BUFFERS]"},
    {"split_k", "SPLITS [tail|stream]"},
    {"promote", "K_ELEMENTS (0: never)"},
    {"symmetric", ""},
    {"accumulator_buffers", "BUFFERS (1 or 2: TMEM double buffering, sm_100a)"},
};

std::string directive_names() {
  std::string s;
  for (const auto& u : kUsages) s += (s.empty() ? "" : ", ") + std::string(u.name);
  return s;
}

// Reads the words of one line, throwing `parse-error` that quotes the line and the usage.
class Line {
 public:
  Line(std::string_view text, std::vector<std::string_view> words, std::string usage)
      : text_(text), words_(std::move(words)), usage_(std::move(usage)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw_user_error("parse-error", "'" + std::string(trimmed()) + "': " + what + " (usage: " + usage_ + ")");
  }

  size_t size() const { return words_.size(); }
  void arity(size_t min_args, size_t max_args) const {
    size_t n = words_.size() - 1;
    if (n < min_args || n > max_args) {
      std::string want = min_args == max_args ? std::to_string(min_args)
                         : max_args == std::numeric_limits<size_t>::max()
                             ? "at least " + std::to_string(min_args)
                             : std::to_string(min_args) + " to " + std::to_string(max_args);
      fail("expected " + want + " argument(s), got " + std::to_string(n));
    }
  }
  std::string word(size_t i) const { return std::string(words_.at(i)); }

  int64_t integer(size_t i, const char* what) const {
    std::string_view w = words_.at(i);
    int64_t v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size())
      fail("expected an integer " + std::string(what) + ", got '" + std::string(w) + "'");
    return v;
  }
  int small_integer(size_t i, const char* what) const {
    int64_t v = integer(i, what);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      fail(std::string(what) + " " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  }
  double real(size_t i, const char* what) const {
    std::string_view w = words_.at(i);
    double v = 0;
    auto res = std::from_chars(w.data(), w.data() + w.size(), v);
    if (res.ec != std::errc() || res.ptr != w.data() + w.size())
      fail("expected a number " + std::string(what) + ", got '" + std::string(w) + "'");
    return v;
  }
  template <class T>
  T keyword(size_t i, std::initializer_list<std::pair<const char*, T>> choices, const char* what) const {
    std::string_view w = words_.at(i);
    std::string legal;
    for (const auto& [name, value] : choices) {
      if (w == name) return value;
      legal += (legal.empty() ? "" : ", ") + std::string(name);
    }
    fail("expected " + std::string(what) + " (one of " + legal + "), got '" + std::string(w) + "'");
  }

 private:
  std::string_view trimmed() const {
    size_t b = text_.find_first_not_of(" \t");
    size_t e = text_.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string_view() : text_.substr(b, e - b + 1);
  }

  std::string_view text_;
  std::vector<std::string_view> words_;
  std::string usage_;
};

Directive parse_words(std::string_view text, const std::vector<std::string_view>& words) {
  GG_INTERNAL_CHECK(!words.empty(), "parse of an empty line");
  const Usage* usage = nullptr;
  for (const auto& u : kUsages)
    if (words[0] == u.name) usage = &u;
  if (!usage)
    throw_user_error("parse-error", "'" + std::string(words[0]) + "' is not a directive; expected one of " +
                     directive_names() + " (or epilogue, problem)");
  Line l(text, words, std::string(usage->name) + " " + usage->args);
  const std::string_view name = words[0];
  constexpr size_t many = std::numeric_limits<size_t>::max();

  if (name == "split") {
    l.arity(4, 4);
    return SplitD{l.word(1), l.integer(2, "split factor"), l.word(3), l.word(4)};
  }
  if (name == "merge") {
    l.arity(3, 3);
    return MergeD{l.word(1), l.word(2), l.word(3)};
  }
  if (name == "reorder") {
    l.arity(1, many);
    ReorderD d;
    for (size_t i = 1; i < l.size(); ++i) d.order.push_back(l.word(i));
    return d;
  }
  if (name == "bind") {
    l.arity(2, 2);
    return BindD{l.word(1), parse_binding(words[2])};
  }
  if (name == "tile") {
    l.arity(3, 3);
    return TileD{l.integer(1, "tile m extent"), l.integer(2, "tile n extent"), l.integer(3, "tile k extent")};
  }
  if (name == "cache_read") {
    l.arity(2, 2);
    return CacheReadD{l.word(1), l.keyword<CopyMethod>(2, kCopyMethods, "a copy method")};
  }
  if (name == "cache_write") {
    l.arity(2, 3);
    Place p = l.keyword<Place>(2, {{"registers", Place::Registers}, {"tmem", Place::Tmem}, {"shared", Place::Shared}},
                               "a place");
    CopyMethod m = CopyMethod::Sync;
    if (l.size() == 4) m = l.keyword<CopyMethod>(3, kCopyMethods, "a copy method");
    return CacheWriteD{l.word(1), p, m};
  }
  if (name == "inline") {
    l.arity(1, 1);
    return InlineD{l.word(1)};
  }
  if (name == "compute_at") {
    l.arity(2, 2);
    return ComputeAtD{l.word(1), l.word(2)};
  }
  if (name == "circular_buffer") {
    l.arity(2, 3);
    int stages = l.small_integer(2, "stage count");
    int prefetch = l.size() == 4 ? l.small_integer(3, "prefetch distance") : stages - 1;
    return CircularBufferD{l.word(1), stages, prefetch};
  }
  if (name == "warp_specialize") {
    l.arity(2, 2);
    return WarpSpecializeD{l.small_integer(1, "producer register count"), l.small_integer(2, "consumer register count")};
  }
  if (name == "persist") {
    l.arity(2, 5);
    PersistD d{l.word(1), l.word(2), "tile", Raster::RowMajor, 8};
    if (l.size() > 3) d.fused = l.word(3);
    if (l.size() > 4)
      d.raster = l.keyword<Raster>(4, {{"row", Raster::RowMajor}, {"column", Raster::ColumnMajor}, {"hilbert", Raster::Hilbert},
                                       {"triangle", Raster::Triangle}},
                                      "a raster order");
    if (l.size() > 5) d.group = l.integer(5, "group size");
    return d;
  }
  if (name == "cluster") {
    l.arity(1, 3);
    ClusterD d{l.small_integer(1, "cluster x"), 1, 1};
    if (l.size() > 2) d.y = l.small_integer(2, "cluster y");
    if (l.size() > 3) d.z = l.small_integer(3, "cluster z");
    return d;
  }
  if (name == "multicast") {
    l.arity(1, 1);
    return MulticastD{l.word(1)};
  }
  if (name == "ping_pong") {
    l.arity(0, 0);
    return PingPongD{};
  }
  if (name == "split_k") {
    l.arity(1, 2);
    SplitKD d{l.small_integer(1, "split count")};
    if (l.size() > 2) {
      const int extent = l.keyword<int>(2, {{"tail", 1}, {"stream", 2}}, "the split's extent");
      d.tail = true;
      d.stream = extent == 2;
    }
    return d;
  }
  if (name == "symmetric") {
    l.arity(0, 0);
    return SymmetricD{};
  }
  if (name == "accumulator_buffers") {
    l.arity(1, 1);
    return AccumulatorBuffersD{static_cast<int>(l.integer(1, "accumulator buffers"))};
  }
  if (name == "promote") {
    l.arity(1, 1);
    return PromoteD{l.integer(1, "promotion interval")};
  }
  if (name == "store_subtile") {
    l.arity(1, 2);
    return StoreSubtileD{l.integer(1, "subtile columns"), l.size() > 2 ? l.small_integer(2, "staging buffer count") : 2};
  }
  GG_INTERNAL_CHECK(name == "mma", "directive table and parser out of step");
  l.arity(3, 4);
  MmaD d{l.small_integer(1, "mma m"), l.small_integer(2, "mma n"), l.small_integer(3, "mma k"), Target::Sm90a};
  if (l.size() > 4) d.target = parse_target(words[4]);
  return d;
}

EpilogueSpec parse_epilogue(std::string_view text, const std::vector<std::string_view>& words) {
  Line l(text, words, "epilogue scale ALPHA | add_c BETA | bias rows|cols | relu | gelu | silu | drelu | dgelu | dsilu | save | "
                        "rowsum | rowsumsq | colsum | colsumsq");
  if (l.size() < 2) l.fail("expected an epilogue op");
  std::string_view op = words[1];
  EpilogueSpec e;
  if (op == "scale" || op == "add_c") {
    l.arity(2, 2);
    e.kind = op == "scale" ? OpKind::Scale : OpKind::AddScaled;
    e.scalar = l.real(2, op == "scale" ? "alpha" : "beta");
    // Checked here, where the line and the file's name for the op are known, not at add_scaled.
    check_epilogue_scalar("epilogue " + std::string(op), op == "scale" ? "alpha" : "beta", e.scalar);
  } else if (op == "bias") {
    l.arity(2, 2);
    e.kind = OpKind::AddBias;
    e.along = l.keyword<BiasAlong>(2, {{"rows", BiasAlong::Rows}, {"cols", BiasAlong::Cols}}, "the bias direction");
  } else if (op == "relu" || op == "gelu" || op == "silu") {
    l.arity(1, 1);
    e.kind = op == "relu" ? OpKind::Relu : op == "gelu" ? OpKind::Gelu : OpKind::Silu;
  } else if (op == "save") {
    l.arity(1, 1);
    e.save = true;
  } else if (op == "rowsum" || op == "rowsumsq" || op == "colsum" || op == "colsumsq") {
    l.arity(1, 1);
    e = EpilogueSpec::reduction(op.substr(0, 3) == "row" ? ReduceAlong::Rows : ReduceAlong::Cols,
                                op.size() > 6 ? ReduceOp::SumSquares : ReduceOp::Sum);
  } else if (op == "drelu" || op == "dgelu" || op == "dsilu") {
    // times the activation's derivative at the saved pre-activation, an [M,N] input read as C is
    l.arity(1, 1);
    e.kind = OpKind::ActGrad;
    e.activation = op == "drelu" ? OpKind::Relu : op == "dgelu" ? OpKind::Gelu : OpKind::Silu;
  } else {
    l.fail("unknown epilogue op '" + std::string(op) + "'");
  }
  return e;
}

void parse_problem(std::string_view text, const std::vector<std::string_view>& words, ProblemSpec& p) {
  Line l(text, words, "problem m=M n=N k=K dtype=f16|bf16 out=f16|bf16|f32 [a_major=k|m] [b_major=k|n] [d_major=n|m] "
         "[lda=L] [ldb=L] [ldd=L] [batch=B] [stride_a=S] [stride_b=S] [stride_d=S] [orientation=straight|swapped] [compiled=mnk|nk|mk|k] [source=dense|masked|contiguous|varlen_k|pointer_array] "
         "[scale_a=1x128|128x128|row|tensor|none, 1x128:k or 128x128:mn for a major] [scale_b=...] [symmetric=1] [stage=a|b|ab]");
  if (l.size() < 2) l.fail("expected key=value pairs");
  for (size_t i = 1; i < words.size(); ++i) {
    std::string_view w = words[i];
    size_t eq = w.find('=');
    if (eq == std::string_view::npos) l.fail("expected key=value, got '" + std::string(w) + "'");
    std::string_view key = w.substr(0, eq), value = w.substr(eq + 1);
    auto extent = [&](std::optional<int64_t>& slot) {
      int64_t v = 0;
      auto res = std::from_chars(value.data(), value.data() + value.size(), v);
      if (res.ec != std::errc() || res.ptr != value.data() + value.size() || v < 1)
        l.fail("expected a positive integer for " + std::string(key) + ", got '" + std::string(value) + "'");
      if (slot) l.fail(std::string(key) + " is given twice");
      slot = v;
    };
    auto stride = [&](std::optional<int64_t>& slot, int64_t least) {  // 0 broadcasts an operand
      int64_t v = 0;
      auto res = std::from_chars(value.data(), value.data() + value.size(), v);
      if (res.ec != std::errc() || res.ptr != value.data() + value.size() || v < least)
        l.fail("expected " + std::string(least == 0 ? "a non-negative" : "a positive") + " integer for " +
               std::string(key) + ", got '" + std::string(value) + "'");
      if (slot) l.fail(std::string(key) + " is given twice");
      slot = v;
    };
    auto dtype = [&](std::optional<DType>& slot) {
      if (slot) l.fail(std::string(key) + " is given twice");
      slot = parse_dtype(value);
    };
    if (key == "m") extent(p.m);
    else if (key == "n") extent(p.n);
    else if (key == "k") extent(p.k);
    else if (key == "dtype") dtype(p.dtype);
    else if (key == "out") dtype(p.out);
    else if (key == "d_major") {
      if (p.d_layout) l.fail("d_major is given twice");
      if (value != "n" && value != "m") l.fail("expected d_major=n (row-major D) or d_major=m (column-major), got '" + std::string(value) + "'");
      p.d_layout = value == "m" ? OutputLayout::ColumnMajor : OutputLayout::RowMajor;
    } else if (key == "a_major" || key == "b_major") {
      auto& slot = key == "a_major" ? p.a_layout : p.b_layout;
      if (slot) l.fail(std::string(key) + " is given twice");
      slot = parse_operand_major(value, key == "a_major" ? "A" : "B", key == "a_major" ? "m" : "n");
    } else if (key == "lda") extent(p.lda);
    else if (key == "ldb") extent(p.ldb);
    else if (key == "ldd") extent(p.ldd);
    else if (key == "batch") extent(p.batch);
    else if (key == "stride_a") stride(p.stride_a, 0);
    else if (key == "stride_b") stride(p.stride_b, 0);
    else if (key == "stride_d") stride(p.stride_d, 1);
    else if (key == "orientation") {
      if (p.swapped) l.fail("orientation is given twice");
      if (value != "swapped" && value != "straight")
        l.fail("expected orientation=straight or orientation=swapped (D^T = B * A^T), got '" + std::string(value) + "'");
      p.swapped = value == "swapped";
    } else if (key == "compiled") {
      if (p.compiled) l.fail("compiled is given twice");
      ProblemLayout check;
      set_compiled_dims(check, value);  // bad-compiled-dims, at this line
      p.compiled = std::string(value);
    } else if (key == "source") {
      if (p.source) l.fail("source is given twice");
      if (value != "dense" && value != "masked" && value != "contiguous" && value != "varlen_k" &&
          value != "pointer_array")
        l.fail("expected source=dense, source=masked (groups whose rows in use are read at run time), "
               "source=contiguous (groups of rows of one A and D, their offsets read at run time), source=varlen_k "
               "(groups of K ranges of one A and B, each its own D) or source=pointer_array (groups with their own "
               "pointers, sizes and leading dimensions in device arrays), got '" + std::string(value) + "'");
      p.source = value == "masked"          ? ProblemSource::Masked
                 : value == "contiguous"    ? ProblemSource::Contiguous
                 : value == "varlen_k"      ? ProblemSource::VarlenK
                 : value == "pointer_array" ? ProblemSource::PointerArray
                                            : ProblemSource::Dense;
    } else if (key == "symmetric") {
      if (p.symmetric) l.fail("symmetric is given twice");
      if (value != "0" && value != "1") l.fail("expected symmetric=1 (D = A * A^T) or symmetric=0, got '" + std::string(value) + "'");
      p.symmetric = value == "1";
    } else if (key == "stage") {
      if (p.stage) l.fail("stage is given twice");
      if (value != "a" && value != "b" && value != "ab")
        l.fail("expected stage=a, stage=b or stage=ab (the operands read through an aligned copy), got '" +
               std::string(value) + "'");
      p.stage = std::string(value);
    } else if (key == "scale_a" || key == "scale_b") {
      auto& slot = key == "scale_a" ? p.scale_a : p.scale_b;
      if (slot) l.fail(std::string(key) + " is given twice");
      if (value != "none") parse_scale_spec(value);  // bad-scale, at this line
      slot = std::string(value);
    } else
      l.fail("unknown key '" + std::string(key) + "'; legal keys are m, n, k, dtype, out, a_major, b_major, d_major, "
             "lda, ldb, ldd, batch, stride_a, stride_b, stride_d, orientation, compiled, source, scale_a, scale_b, "
             "symmetric, stage");
  }
}

[[noreturn]] void rethrow_at_line(const CompileError& e, int line) {
  throw CompileError(e.rule(), "line " + std::to_string(line) + ": " + e.message());
}

}  // namespace

std::string_view raster_name(Raster r) {
  return r == Raster::RowMajor ? "row" : r == Raster::ColumnMajor ? "column" : r == Raster::Hilbert ? "hilbert" : "triangle";
}

std::optional<Raster> raster_of_name(std::string_view name) {
  for (Raster r : {Raster::RowMajor, Raster::ColumnMajor, Raster::Hilbert, Raster::Triangle})
    if (raster_name(r) == name) return r;
  return std::nullopt;
}

std::string print_directive(const Directive& d) {
  std::ostringstream os;
  os << directive_name(d);
  std::visit(
      [&os](const auto& x) {
        using D = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<D, SplitD>) os << " " << x.axis << " " << x.factor << " " << x.outer << " " << x.inner;
        if constexpr (std::is_same_v<D, MergeD>) os << " " << x.outer << " " << x.inner << " " << x.fused;
        if constexpr (std::is_same_v<D, ReorderD>)
          for (const auto& a : x.order) os << " " << a;
        if constexpr (std::is_same_v<D, BindD>) os << " " << x.axis << " " << binding_name(x.binding);
        if constexpr (std::is_same_v<D, TileD>) os << " " << x.m << " " << x.n << " " << x.k;
        if constexpr (std::is_same_v<D, CacheReadD>) os << " " << x.tensor << " " << method_name(x.method);
        if constexpr (std::is_same_v<D, CacheWriteD>) {
          os << " " << x.tensor << " " << place_name(x.place);
          if (x.method != CopyMethod::Sync) os << " " << method_name(x.method);
        }
        if constexpr (std::is_same_v<D, InlineD>) os << " " << x.op;
        if constexpr (std::is_same_v<D, ComputeAtD>) os << " " << x.op << " " << x.axis;
        if constexpr (std::is_same_v<D, CircularBufferD>) os << " " << x.axis << " " << x.stages << " " << x.prefetch;
        if constexpr (std::is_same_v<D, WarpSpecializeD>) os << " " << x.producer_regs << " " << x.consumer_regs;
        if constexpr (std::is_same_v<D, PersistD>)
          os << " " << x.m_axis << " " << x.n_axis << " " << x.fused << " " << raster_name(x.raster) << " " << x.group;
        if constexpr (std::is_same_v<D, ClusterD>) os << " " << x.x << " " << x.y << " " << x.z;
        if constexpr (std::is_same_v<D, MulticastD>) os << " " << x.operand;
        if constexpr (std::is_same_v<D, MmaD>) os << " " << x.m << " " << x.n << " " << x.k << " " << target_name(x.target);
        if constexpr (std::is_same_v<D, StoreSubtileD>) os << " " << x.cols << " " << x.buffers;
        if constexpr (std::is_same_v<D, SplitKD>) os << " " << x.splits << (x.stream ? " stream" : x.tail ? " tail" : "");
        if constexpr (std::is_same_v<D, PromoteD>) os << " " << x.interval;
        if constexpr (std::is_same_v<D, AccumulatorBuffersD>) os << " " << x.buffers;
      },
      d);
  return os.str();
}

std::string print_directives(const std::vector<Directive>& ds) {
  std::string out;
  for (const auto& d : ds) out += print_directive(d) + "\n";
  return out;
}

std::optional<std::vector<EpilogueSpec>> epilogue_specs_of(const Definition& def) {
  const Node& mm = def.matmul_node();
  const bool symmetric = mm.operands[0] == mm.operands[1];  // D = A * A^T (problem ... symmetric=1)
  if (def.node(mm.operands[0]).name != "A" || def.node(mm.operands[1]).name != (symmetric ? "A" : "B"))
    return std::nullopt;
  // The problem line states majors, A's, B's and D's ld and batch stride, and the batch.
  for (int id = 0; id < def.size(); ++id) {
    const Node& n = def.node(id);
    const bool on_problem_line = id == mm.operands[0] || id == mm.operands[1] || id == def.output();
    if (!on_problem_line && (n.batch_stride >= 0 || (n.ld > 0 && n.kind == OpKind::Input))) return std::nullopt;
  }
  std::vector<int> ops = def.epilogue();
  if (ops.empty()) return std::nullopt;
  const Node& last = def.node(ops.back());
  if (last.kind != OpKind::Cast || last.id != def.output()) return std::nullopt;
  std::vector<EpilogueSpec> specs;
  EpilogueSpec save;
  save.save = true;
  // What is saved or reduced at node `id` follows the op that computes it.
  auto after = [&](int id) {
    if (id == def.saved_output()) specs.push_back(save);
    for (const Reduction& r : def.reductions())
      if (r.node == id && r.name == default_reduction_name(r.along, r.op)) specs.push_back(EpilogueSpec::reduction(r.along, r.op));
  };
  for (const Reduction& r : def.reductions())
    if (r.name != default_reduction_name(r.along, r.op)) return std::nullopt;  // the text names none
  after(mm.id);
  int prev = mm.id;
  for (int id : ops) {
    const Node& n = def.node(id);
    if (n.operands.empty() || n.operands[0] != prev) return std::nullopt;  // not a chain
    prev = id;
    if (id == ops.back()) break;
    EpilogueSpec e;
    e.kind = n.kind;
    switch (n.kind) {
      case OpKind::Scale: e.scalar = n.scalar; break;
      case OpKind::ActGrad:
        if (def.node(n.operands.at(1)).kind != OpKind::Input || def.node(n.operands.at(1)).dtype != last.dtype)
          return std::nullopt;
        e.activation = n.activation;
        break;
      case OpKind::AddScaled:
      case OpKind::AddBias: {
        const Node& extra = def.node(n.operands.at(1));
        if (extra.kind != OpKind::Input || extra.dtype != last.dtype) return std::nullopt;
        e.scalar = n.scalar;
        e.along = n.bias_along;
        if (n.kind == OpKind::AddBias) e.scalar = 0.0;
        break;
      }
      case OpKind::Relu:
      case OpKind::Gelu:
      case OpKind::Silu: break;
      default: return std::nullopt;
    }
    specs.push_back(e);
    after(id);
  }
  after(def.output());
  return specs;
}

std::string print_schedule(const Schedule& s) {
  const Definition& def = s.definition();
  std::ostringstream os;
  os << "# gemmgen schedule: " << s.directives().size() << " directive(s)\n";
  // The caller's problem: a swapped definition's M and N, and its layout, exchanged back.
  const bool swapped = def.swapped();
  os << "problem m=" << (swapped ? def.n() : def.m()) << " n=" << (swapped ? def.m() : def.n()) << " k=" << def.k()
     << " dtype=" << dtype_name(def.input_dtype()) << " out=" << dtype_name(def.output_dtype());
  const ProblemLayout l = swapped ? swapped_layout(problem_layout(def)) : problem_layout(def);
  if (l.a == Layout::MNMajor) os << " a_major=m";
  if (l.b == Layout::MNMajor) os << " b_major=n";
  if (l.d == OutputLayout::ColumnMajor) os << " d_major=m";
  if (l.lda) os << " lda=" << l.lda;
  if (l.ldb) os << " ldb=" << l.ldb;
  if (l.ldd) os << " ldd=" << l.ldd;
  if (l.batch > 1) os << " batch=" << l.batch;
  if (l.stride_a >= 0) os << " stride_a=" << l.stride_a;
  if (l.stride_b >= 0) os << " stride_b=" << l.stride_b;
  if (l.stride_d >= 0) os << " stride_d=" << l.stride_d;
  if (swapped) os << " orientation=swapped";
  if (compiled_dims_text(l) != compiled_dims_text(ProblemLayout{})) os << " compiled=" << compiled_dims_text(l);
  if (l.source != ProblemSource::Dense) os << " source=" << problem_source_name(l.source);
  if (l.symmetric) os << " symmetric=1";
  if (l.stage_a || l.stage_b) os << " stage=" << (l.stage_a ? "a" : "") << (l.stage_b ? "b" : "");
  // An FP8 problem says both, "none" included: a reader's default for FP8 is DeepGEMM's factors.
  const ProblemLayout defaults;
  if (dtype_is_fp8(def.input_dtype()) || l.scale_a || l.scale_b)
    os << " scale_a="
       << (l.scale_a ? scale_spec_text(*l.scale_a, l.scale_a_major, defaults.scale_a_major, l.scale_a_format) : "none")
       << " scale_b="
       << (l.scale_b ? scale_spec_text(*l.scale_b, l.scale_b_major, defaults.scale_b_major, l.scale_b_format) : "none");
  os << "\n";
  if (swapped)
    os << "# computed as D^T = B * A^T: the directives schedule the swapped problem (M'=" << def.m() << " N'=" << def.n()
       << "), whose A is the problem's B\n";
  if (auto specs = epilogue_specs_of(def)) {
    for (const auto& e : *specs) {
      os << "epilogue ";
      if (e.save) {
        os << "save\n";
        continue;
      }
      if (e.reduce) {  // a swapped definition's rows are the problem's columns
        os << ((e.reduce_along == ReduceAlong::Rows) != swapped ? "row" : "col")
           << (e.reduce_op == ReduceOp::Sum ? "sum" : "sumsq") << "\n";
        continue;
      }
      switch (e.kind) {
        case OpKind::Scale: os << "scale " << number(e.scalar); break;
        case OpKind::AddScaled: os << "add_c " << number(e.scalar); break;
        case OpKind::AddBias: os << "bias " << ((e.along == BiasAlong::Rows) != swapped ? "rows" : "cols"); break;
        case OpKind::ActGrad: os << "d" << op_name(e.activation); break;
        default: os << op_name(e.kind); break;
      }
      os << "\n";
    }
  } else {
    os << "# the definition is not a chain A*B -> epilogue -> cast; its epilogue cannot be written here\n";
  }
  os << print_directives(s.directives());
  return os.str();
}

Directive parse_directive(std::string_view line) {
  auto words = split_words(line);
  if (words.empty()) throw_user_error("parse-error", "empty line: expected a directive (" + directive_names() + ")");
  return parse_words(line, words);
}

namespace {
[[noreturn]] void too_many(const std::string& what, size_t most) {
  throw_user_error("too-many-directives", "more than " + std::to_string(most) + " " + what +
                                              " in one schedule file; legal is at most " + std::to_string(most));
}
}  // namespace

ScheduleFile parse_schedule_file(std::string_view text) {
  // Editors on Windows start UTF-8 files with a byte order mark; it is not a word of line 1.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  ScheduleFile file;
  bool seen_problem = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto words = split_words(line);
    if (words.empty()) continue;
    try {
      if (words[0] == "epilogue") {
        if (file.epilogue.size() == kMaxEpilogueOps) too_many("epilogue ops", kMaxEpilogueOps);
        file.epilogue.push_back(parse_epilogue(line, words));
      } else if (words[0] == "problem") {
        if (seen_problem) throw_user_error("parse-error", "a second 'problem' line; give the problem once");
        seen_problem = true;
        parse_problem(line, words, file.problem);
      } else {
        if (file.directives.size() == kMaxDirectives) too_many("directives", kMaxDirectives);
        file.directives.push_back(parse_words(line, words));
        file.directive_lines.push_back(line_no);
      }
    } catch (const CompileError& e) {
      rethrow_at_line(e, line_no);
    }
    if (end == text.size()) break;
  }
  // Without directives the schedule would reach validation as `no-mma`, or print as nothing.
  if (file.directives.empty())
    throw_user_error("empty-schedule", "the schedule file holds no directives (only comments, blank lines, problem or "
                                       "epilogue lines); legal is at least one directive (tile, bind, mma, ...): "
                                       "`gemmgen print --schedule v5` writes a complete one to start from");
  return file;
}

OutputLayout parse_d_major(std::string_view text) {
  if (text == "n") return OutputLayout::RowMajor;
  if (text == "m") return OutputLayout::ColumnMajor;
  throw_user_error("parse-error", "expected a D layout n (row-major: n contiguous) or m (column-major), got '" +
                                      std::string(text) + "'");
}

Layout parse_operand_major(std::string_view text, std::string_view operand, std::string_view mn) {
  if (text == "k") return Layout::KMajor;
  if (text == mn) return Layout::MNMajor;
  throw_user_error("parse-error", "expected " + std::string(operand) + "'s major k (K contiguous) or " + std::string(mn) +
                                      " (" + std::string(mn == "m" ? "M" : "N") + " contiguous), got '" +
                                      std::string(text) + "'");
}

Definition make_definition(int64_t m, int64_t n, int64_t k, DType in, DType out,
                           const std::vector<EpilogueSpec>& epilogue, const ProblemLayout& layout, bool swapped) {
  if (swapped) {
    // D^T = epilogue(B * A^T): the caller's rows are the kernel's columns, so a bias along them
    // runs along the other side.
    std::vector<EpilogueSpec> exchanged = epilogue;
    for (auto& e : exchanged) {
      if (e.kind == OpKind::AddBias) e.along = e.along == BiasAlong::Rows ? BiasAlong::Cols : BiasAlong::Rows;
      if (e.reduce) e.reduce_along = e.reduce_along == ReduceAlong::Rows ? ReduceAlong::Cols : ReduceAlong::Rows;
    }
    Definition def = make_definition(n, m, k, in, out, exchanged, swapped_layout(layout), false);
    def.set_swapped(true);
    return def;
  }
  Definition def;
  auto [a, b] = gemm_inputs(def, m, n, k, in, layout);
  Tensor x = def.matmul(a, b);
  auto fresh = [&def](const std::string& base) {
    if (!def.find(base)) return base;
    for (int i = 1;; ++i)
      if (!def.find(base + std::to_string(i))) return base + std::to_string(i);
  };
  for (const auto& e : epilogue) {
    if (e.save) {
      def.set_saved_output(x, fresh("PreAct"));
      continue;
    }
    if (e.reduce) {
      def.add_reduction(x, e.reduce_along, e.reduce_op, default_reduction_name(e.reduce_along, e.reduce_op));
      continue;
    }
    switch (e.kind) {
      case OpKind::Scale: x = def.scale(x, e.scalar); break;
      case OpKind::AddScaled: x = def.add_scaled(x, def.input(fresh("C"), {m, n}, out), e.scalar); break;
      case OpKind::AddBias:
        x = def.add_bias(x, def.input(fresh("Bias"), {e.along == BiasAlong::Rows ? m : n}, out), e.along);
        break;
      case OpKind::Relu: x = def.relu(x); break;
      case OpKind::Gelu: x = def.gelu(x); break;
      case OpKind::Silu: x = def.silu(x); break;
      case OpKind::ActGrad: x = def.activation_grad(x, def.input(fresh("PreAct"), {m, n}, out), e.activation); break;
      default:
        throw_user_error("epilogue-op", "epilogue " + std::string(op_name(e.kind)) +
                         ": legal epilogue ops are scale, add_c, bias, relu, gelu, silu, drelu, dgelu, dsilu");
    }
  }
  set_gemm_output(def, def.cast(x, out), layout);
  return def;
}

Definition resized_definition(const Definition& def, int64_t m, int64_t n) {
  const auto epilogue = epilogue_specs_of(def);
  GG_INTERNAL_CHECK(epilogue.has_value(), "resizing a definition that is not of make_definition's form");
  Definition resized = make_definition(m, n, def.k(), def.input_dtype(), def.output_dtype(), *epilogue,
                                       problem_layout(def), false);
  resized.set_swapped(def.swapped());
  return resized;
}

Schedule apply_directives(const Definition& def, const std::vector<Directive>& directives,
                          const std::vector<int>& lines) {
  GG_INTERNAL_CHECK(lines.empty() || lines.size() == directives.size(), "one line number per directive");
  Schedule s(def);
  for (size_t i = 0; i < directives.size(); ++i) {
    try {
      s.apply(directives[i]);
    } catch (const CompileError& e) {
      if (lines.empty()) throw;
      rethrow_at_line(e, lines[i]);
    }
  }
  return s;
}

}  // namespace gg
