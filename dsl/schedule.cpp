#include "dsl/schedule.h"

#include <algorithm>
#include <sstream>

#include "dsl/error.h"
#include "targets/mma_shapes.h"

namespace gg {

std::string_view target_name(Target t) { return t == Target::Sm90a ? "sm_90a" : "sm_100a"; }

Target parse_target(std::string_view name) {
  if (name == "sm_90a") return Target::Sm90a;
  if (name == "sm_100a") return Target::Sm100a;
  throw_user_error("unknown-arch", "unknown arch '" + std::string(name) +
                   "': legal targets are sm_90a (Hopper, WGMMA) and sm_100a (Blackwell, tcgen05)");
}

bool operator==(const Directive& a, const Directive& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using D = std::decay_t<decltype(x)>;
        const D& y = std::get<D>(b);
        if constexpr (std::is_same_v<D, SplitD>) return x.axis == y.axis && x.factor == y.factor && x.outer == y.outer && x.inner == y.inner;
        if constexpr (std::is_same_v<D, MergeD>) return x.outer == y.outer && x.inner == y.inner && x.fused == y.fused;
        if constexpr (std::is_same_v<D, ReorderD>) return x.order == y.order;
        if constexpr (std::is_same_v<D, BindD>) return x.axis == y.axis && x.binding == y.binding;
        if constexpr (std::is_same_v<D, TileD>) return x.m == y.m && x.n == y.n && x.k == y.k;
        if constexpr (std::is_same_v<D, CacheReadD>) return x.tensor == y.tensor && x.method == y.method;
        if constexpr (std::is_same_v<D, CacheWriteD>) return x.tensor == y.tensor && x.place == y.place && x.method == y.method;
        if constexpr (std::is_same_v<D, InlineD>) return x.op == y.op;
        if constexpr (std::is_same_v<D, ComputeAtD>) return x.op == y.op && x.axis == y.axis;
        if constexpr (std::is_same_v<D, CircularBufferD>) return x.axis == y.axis && x.stages == y.stages && x.prefetch == y.prefetch;
        if constexpr (std::is_same_v<D, WarpSpecializeD>) return x.producer_regs == y.producer_regs && x.consumer_regs == y.consumer_regs;
        if constexpr (std::is_same_v<D, PersistD>) return x.m_axis == y.m_axis && x.n_axis == y.n_axis && x.fused == y.fused && x.raster == y.raster && x.group == y.group;
        if constexpr (std::is_same_v<D, ClusterD>) return x.x == y.x && x.y == y.y && x.z == y.z;
        if constexpr (std::is_same_v<D, MulticastD>) return x.operand == y.operand;
        if constexpr (std::is_same_v<D, MmaD>) return x.m == y.m && x.n == y.n && x.k == y.k && x.target == y.target;
        if constexpr (std::is_same_v<D, PingPongD>) return true;
        if constexpr (std::is_same_v<D, StoreSubtileD>) return x.cols == y.cols && x.buffers == y.buffers;
        if constexpr (std::is_same_v<D, SplitKD>) return x.splits == y.splits && x.tail == y.tail && x.stream == y.stream;
        if constexpr (std::is_same_v<D, PromoteD>) return x.interval == y.interval;
        if constexpr (std::is_same_v<D, SymmetricD>) return true;
        if constexpr (std::is_same_v<D, AccumulatorBuffersD>) return x.buffers == y.buffers;
      },
      a);
}

std::string directive_name(const Directive& d) {
  static const char* names[] = {"split", "merge", "reorder", "bind", "tile", "cache_read", "cache_write", "inline",
                                "compute_at", "circular_buffer", "warp_specialize", "persist", "cluster",
                                "multicast", "mma", "ping_pong", "store_subtile", "split_k", "promote",
                                "symmetric", "accumulator_buffers"};
  static_assert(std::size(names) == std::variant_size_v<Directive>);
  return names[d.index()];
}

Schedule::Schedule(Definition def) : def_(std::move(def)) {
  def_.output();  // a schedule needs a complete definition
  if (dtype_is_fp8(def_.output_dtype()))
    throw_user_error("fp8-operand", "the output is " + std::string(dtype_name(def_.output_dtype())) +
                     "; FP8 is an MMA operand type (A and B): the output is f16, bf16 or f32");
  const auto& mma_operands = def_.matmul_node().operands;
  for (int id = 0; id < def_.size(); ++id)  // C and bias: the epilogue has no FP8 loads
    if (const Node& n = def_.node(id); n.kind == OpKind::Input && dtype_is_fp8(n.dtype) &&
                                       std::find(mma_operands.begin(), mma_operands.end(), id) == mma_operands.end())
      throw_user_error("fp8-operand", "input '" + n.name + "': dtype " + std::string(dtype_name(n.dtype)) +
                       " is an MMA operand type (A and B); C and bias are f16, bf16 or f32");
  if (def_.input_dtype() == DType::F32)
    throw_user_error("operand-dtype", "operands A and B are f32; the tensor cores take f16, bf16, e4m3 or e5m2 operands");
  domain_ = Domain(def_.m(), def_.n(), def_.k());
}

namespace {
// The index of alternative D in Directive, at compile time.
template <class D, class... Ts>
constexpr size_t alternative(const std::variant<Ts...>*) {
  constexpr bool same[] = {std::is_same_v<D, Ts>...};
  for (size_t i = 0; i < sizeof...(Ts); ++i)
    if (same[i]) return i;
  return sizeof...(Ts);
}
}  // namespace

template <class D>
const D* Schedule::last() const {
  const int at = last_at_[alternative<D>(static_cast<const Directive*>(nullptr))];
  return at < 0 ? nullptr : &std::get<D>(directives_[static_cast<size_t>(at)]);
}

void Schedule::record(Directive d) {
  last_at_[d.index()] = static_cast<int>(directives_.size());
  if (auto* i = std::get_if<InlineD>(&d)) inlined_.insert(i->op);
  if (auto* c = std::get_if<ComputeAtD>(&d)) inlined_.insert(c->op);
  directives_.push_back(std::move(d));
}

Schedule& Schedule::split(const std::string& axis, int64_t factor, const std::string& outer, const std::string& inner) {
  domain_.split(axis, factor, outer, inner);
  record(SplitD{axis, factor, outer, inner});
  return *this;
}

Schedule& Schedule::merge(const std::string& outer, const std::string& inner, const std::string& fused) {
  domain_.merge(outer, inner, fused);
  record(MergeD{outer, inner, fused});
  return *this;
}

Schedule& Schedule::reorder(const std::vector<std::string>& order) {
  domain_.reorder(order);
  record(ReorderD{order});
  return *this;
}

namespace {
void check_register_file(int producer_regs, int consumer_regs, int consumers) {
  int64_t total = int64_t(kWarpgroupThreads) * producer_regs + int64_t(consumers) * kWarpgroupThreads * consumer_regs;
  if (total > kRegisterFile)
    throw_user_error("register-file", "warp_specialize: 1 producer warpgroup x 128 threads x " +
                     std::to_string(producer_regs) + " + " + std::to_string(consumers) +
                     " consumer warpgroup(s) x 128 threads x " + std::to_string(consumer_regs) + " = " +
                     std::to_string(total) + " registers, over the 65536-register file; lower consumer_regs to at most " +
                     std::to_string(((kRegisterFile - kWarpgroupThreads * producer_regs) / (consumers * kWarpgroupThreads)) / 8 * 8));
}
}  // namespace

Schedule& Schedule::bind(const std::string& axis, Binding binding) {
  Domain next = domain_;
  next.bind(axis, binding);
  if (binding == Binding::Warpgroup) {
    if (consumer_mode() == ConsumerMode::PingPong)
      throw_user_error("consumer-mode", "bind " + axis + " warpgroup: the consumers already take whole tiles in turn "
                       "(ping_pong); a schedule either splits a tile over consumer warpgroups or ping-pongs tiles "
                       "between them, not both");
    const int64_t extent = next.axis(axis).extent;  // compared before narrowing: 2^62 must not become 0
    if (extent > 3)
      throw_user_error("warpgroup-count", "bind " + axis + " warpgroup: " + std::to_string(extent) +
                       " consumer warpgroups; a CTA holds at most 3 next to the producer (split the axis so the "
                       "warpgroup part has extent 1, 2 or 3)");
    if (auto ws = warp_roles()) check_register_file(ws->producer_regs, ws->consumer_regs, static_cast<int>(extent));
  }
  domain_ = std::move(next);
  record(BindD{axis, binding});
  return *this;
}

Schedule& Schedule::tile(int64_t m, int64_t n, int64_t k) {
  if (last<TileD>()) throw_user_error("duplicate-directive", "tile: the schedule is already tiled");
  Domain next = domain_;
  next.split("m", m, "m_o", "m_i");
  next.split("n", n, "n_o", "n_i");
  next.split("k", k, "k_o", "k_i");
  next.reorder({"m_o", "n_o", "k_o", "m_i", "n_i", "k_i"});
  domain_ = std::move(next);
  record(TileD{m, n, k});
  return *this;
}

const Node& Schedule::operand(const std::string& tensor, const char* primitive) const {
  const Node& mm = def_.matmul_node();
  for (int id : mm.operands)
    if (def_.node(id).name == tensor) return def_.node(id);
  const std::string& a = def_.node(mm.operands[0]).name;
  if (mm.operands[0] == mm.operands[1])  // D = A * A^T
    throw_user_error("not-an-operand", std::string(primitive) + " " + tensor + ": '" + tensor +
                     "' is not an operand of the matmul; its one operand is " + a + ", read as both (A * A^T)");
  throw_user_error("not-an-operand", std::string(primitive) + " " + tensor + ": '" + tensor +
                   "' is not an operand of the matmul; legal operands are " + a + " and " +
                   def_.node(mm.operands[1]).name);
}

Schedule& Schedule::cache_read(const std::string& tensor, CopyMethod method) {
  operand(tensor, "cache_read");
  if (declared_read(tensor))
    throw_user_error("duplicate-directive", "cache_read " + tensor + ": the operand is already cached in shared memory");
  record(CacheReadD{tensor, method});
  return *this;
}

Schedule& Schedule::cache_write(const std::string& tensor, Place place, CopyMethod method) {
  const std::string& acc = def_.matmul_node().name;
  const std::string& out = def_.node(def_.output()).name;
  if (tensor == acc) {
    if (place == Place::Shared)
      throw_user_error("cache-write-place", "cache_write " + tensor + " shared: the accumulator lives in registers "
                       "(sm_90a) or tmem (sm_100a); stage the output '" + out + "' in shared memory instead");
  } else if (tensor == out) {
    if (place != Place::Shared)
      throw_user_error("cache-write-place", "cache_write " + tensor + ": the output is staged in shared memory for "
                       "the store; registers/tmem apply to the accumulator '" + acc + "'");
  } else {
    throw_user_error("cache-write-tensor", "cache_write " + tensor + ": legal tensors are the accumulator '" + acc +
                     "' and the output '" + out + "'");
  }
  if (declared_write(tensor))
    throw_user_error("duplicate-directive", "cache_write " + tensor + ": already placed by an earlier cache_write");
  record(CacheWriteD{tensor, place, method});
  return *this;
}

const Node& Schedule::epilogue_op(const std::string& op, const char* primitive) const {
  const Node* n = def_.find(op);
  if (!n) throw_user_error("unknown-op", std::string(primitive) + " " + op + ": the definition has no op '" + op + "'");
  if (!op_is_elementwise(n->kind))
    throw_user_error("inline-non-elementwise", std::string(primitive) + " " + op + ": '" + op + "' is " +
                     (n->kind == OpKind::Matmul ? "the matmul, a reduction" : "an input") +
                     "; only elementwise epilogue ops (scale, add_scaled, add_bias, relu, gelu, silu, cast) "
                     "can be inlined into the writeback");
  if (is_inlined(op))
    throw_user_error("duplicate-directive", std::string(primitive) + " " + op + ": already inlined");
  return *n;
}

Schedule& Schedule::inline_op(const std::string& op) {
  epilogue_op(op, "inline");
  record(InlineD{op});
  return *this;
}

Schedule& Schedule::compute_at(const std::string& op, const std::string& axis) {
  epilogue_op(op, "compute_at");
  domain_.axis(axis);
  record(ComputeAtD{op, axis});
  return *this;
}

namespace {
void check_stages_against_roles(int stages, bool warp_specialized) {
  if (warp_specialized && stages < 2)
    throw_user_error("stages-too-few", "circular_buffer: " + std::to_string(stages) +
                     " stage under warp specialization leaves the producer nothing to run ahead into; use >= 2 "
                     "stages");
}
}  // namespace

Schedule& Schedule::circular_buffer(const std::string& axis, int stages, int prefetch) {
  const Axis& a = domain_.axis(axis);
  if (a.roots != unsigned(Root::K) || a.level != Level::Tile)
    throw_user_error("circular-buffer-axis", "circular_buffer " + axis + ": the circular buffer pipelines the k loop "
                     "over k tiles (the outer result of splitting k), not '" + axis + "'");
  if (auto earlier = circular_buffer_of(); earlier && earlier->axis != axis)
    throw_user_error("duplicate-directive", "circular_buffer " + axis + ": the k loop '" + earlier->axis +
                     "' is already circular-buffered; call circular_buffer on it again to change its depth");
  if (stages < 1 || stages > 16)
    throw_user_error("stages-range", "circular_buffer " + axis + ": " + std::to_string(stages) +
                     " stages; legal is 1..16");
  if (prefetch < 0) prefetch = stages - 1;
  if (prefetch > stages - 1 && !(stages == 1 && prefetch == 0))
    throw_user_error("prefetch-range", "circular_buffer " + axis + ": prefetch distance " + std::to_string(prefetch) +
                     " needs more than " + std::to_string(stages) + " stages; legal is 0.." +
                     std::to_string(std::max(0, stages - 1)));
  // Two stages is the smallest pipeline; beyond that, stages the k loop can never fill waste shared memory.
  if (stages > a.extent && stages > 2)
    throw_user_error("stages-exceed-k-trips", "circular_buffer " + axis + ": " + std::to_string(stages) +
                     " stages but the k loop runs only " + std::to_string(a.extent) + " time(s) (K = " +
                     std::to_string(def_.k()) + "); use at most " + std::to_string(std::max<int64_t>(2, a.extent)) + " stages");
  check_stages_against_roles(stages, warp_roles().has_value());
  record(CircularBufferD{axis, stages, prefetch});
  return *this;
}

Schedule& Schedule::warp_specialize(int producer_regs, int consumer_regs) {
  if (warp_roles()) throw_user_error("duplicate-directive", "warp_specialize: roles are already specialized");
  for (auto [role, regs] : {std::pair{"producer", producer_regs}, std::pair{"consumer", consumer_regs}}) {
    if (regs < kMinRegs || regs > kMaxRegs)
      throw_user_error("register-range", std::string("warp_specialize: ") + role + " register count " +
                       std::to_string(regs) + " is outside setmaxnreg's range 24..256");
    if (regs % 8 != 0)
      throw_user_error("register-multiple", std::string("warp_specialize: ") + role + " register count " +
                       std::to_string(regs) + " is not a multiple of 8 (setmaxnreg); use " +
                       std::to_string(regs / 8 * 8) + " or " + std::to_string(regs / 8 * 8 + 8));
  }
  check_register_file(producer_regs, consumer_regs, consumer_warpgroups());
  if (auto cb = circular_buffer_of()) check_stages_against_roles(cb->stages, true);
  record(WarpSpecializeD{producer_regs, consumer_regs});
  return *this;
}

Schedule& Schedule::persist(const std::string& m_axis, const std::string& n_axis, Raster raster, int64_t group,
                            const std::string& fused) {
  domain_.persist(m_axis, n_axis, fused, raster, group);
  record(PersistD{m_axis, n_axis, fused, raster, group});
  return *this;
}

Schedule& Schedule::cluster(int x, int y, int z) {
  if (cluster_dims()) throw_user_error("duplicate-directive", "cluster: the cluster shape is already set");
  if (x < 1 || y < 1 || z < 1)
    throw_user_error("cluster-size", "cluster " + std::to_string(x) + "x" + std::to_string(y) + "x" +
                     std::to_string(z) + ": every dimension must be >= 1");
  int64_t ctas = 0;  // 65536 x 65536 x 1 must not wrap around to a small count
  const bool overflow = __builtin_mul_overflow(int64_t(x) * y, int64_t(z), &ctas);
  if (overflow || ctas > kMaxClusterSize)
    throw_user_error("cluster-size", "cluster " + std::to_string(x) + "x" + std::to_string(y) + "x" +
                     std::to_string(z) + " has " + (overflow ? std::string("more than 2^63") : std::to_string(ctas)) +
                     " CTAs; the portable cluster size limit is 8");
  record(ClusterD{x, y, z});
  return *this;
}

Schedule& Schedule::multicast(const std::string& op) {
  operand(op, "multicast");
  if (!cluster_dims())
    throw_user_error("multicast-without-cluster", "multicast " + op + ": multicast shares one TMA load among the CTAs "
                     "of a cluster, and the schedule has no cluster; add `cluster 2` (C++: cluster(2)) or a larger "
                     "cluster before it");
  for (const auto& existing : multicast_operands())
    if (existing == op) throw_user_error("duplicate-directive", "multicast " + op + ": already multicast");
  record(MulticastD{op});
  return *this;
}

namespace {
// mma-shape: the instruction must exist on the target (its table in targets/).
void check_mma_shape(int m, int n, int k, Target target) {
  const targets::MmaShapes& shapes =
      target == Target::Sm90a ? targets::sm90a_mma_shapes() : targets::sm100a_mma_shapes();
  if (shapes.legal(m, n, k)) return;
  const std::string shape = "m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k);
  throw_user_error("mma-shape", "mma " + shape + ": " + std::string(target_name(target)) +
                   " has no such instruction; legal is " + shapes.legal_text);
}
}  // namespace

Schedule& Schedule::mma(int m, int n, int k, Target target) {
  if (mma_shape()) throw_user_error("duplicate-directive", "mma: the instruction shape is already chosen");
  check_mma_shape(m, n, k, target);
  const DType in = def_.input_dtype();
  if (k * dtype_bytes(in) != 32)  // one instruction reads 32 bytes of K
    throw_user_error("mma-shape", "mma m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k) + ": " +
                     std::string(dtype_name(in)) + " operands take k" + std::to_string(32 / dtype_bytes(in)) +
                     " (one instruction reads 32 bytes of K)");
  record(MmaD{m, n, k, target});
  return *this;
}

Schedule& Schedule::ping_pong() {
  if (consumer_mode() == ConsumerMode::PingPong) throw_user_error("duplicate-directive", "ping_pong: already ping-pong");
  if (const Axis* wg = domain_.bound_to(Binding::Warpgroup))
    throw_user_error("consumer-mode", "ping_pong: axis '" + wg->name + "' is bound to warpgroup, so " +
                     std::to_string(wg->extent) + " consumer warpgroups already split each tile (cooperative); a "
                     "schedule either splits a tile over consumer warpgroups or ping-pongs tiles between them, not both");
  if (auto ws = warp_roles()) check_register_file(ws->producer_regs, ws->consumer_regs, kPingPongConsumers);
  record(PingPongD{});
  return *this;
}

Schedule& Schedule::split_k(int splits, bool tail, bool stream) {
  if (last<SplitKD>()) throw_user_error("duplicate-directive", "split_k: the k loop is already split");
  if (splits < 2 || splits > kMaxSplitK)
    throw_user_error("bad-split-k", "split_k " + std::to_string(splits) + ": legal is 2.." + std::to_string(kMaxSplitK) +
                     " CTAs per output tile");
  record(SplitKD{splits, tail || stream, stream});
  return *this;
}

int Schedule::split_k_of() const {
  auto* d = last<SplitKD>();
  return d ? d->splits : 1;
}

bool Schedule::split_k_tail() const {
  auto* d = last<SplitKD>();
  return d && d->tail;
}

bool Schedule::split_k_stream() const {
  auto* d = last<SplitKD>();
  return d && d->stream;
}

Schedule& Schedule::store_subtile(int64_t cols, int buffers) {
  if (last<StoreSubtileD>()) throw_user_error("duplicate-directive", "store_subtile: the output subtile is already chosen");
  if (cols <= 0 || buffers < 1 || buffers > kMaxStoreBuffers)
    throw_user_error("store-subtile", "store_subtile " + std::to_string(cols) + " " + std::to_string(buffers) +
                     ": a subtile has at least one column and there are 1.." + std::to_string(kMaxStoreBuffers) +
                     " staging buffers per consumer warpgroup");
  record(StoreSubtileD{cols, buffers});
  return *this;
}

Schedule& Schedule::promote(int64_t interval) {
  if (last<PromoteD>()) throw_user_error("duplicate-directive", "promote: the promotion interval is already chosen");
  // 16-bit operands: any whole number of k tiles (checked where the k tile is known).
  if (!dtype_is_fp8(def_.input_dtype()) && interval < 0)
    throw_user_error("promote", "promote " + std::to_string(interval) + ": the interval is a number of elements of K, "
                     "or 0 (never promote)");
  if (dtype_is_fp8(def_.input_dtype()) && (interval < 0 || interval % kScaleBlock != 0))
    throw_user_error("promote", "promote " + std::to_string(interval) + ": the interval is a multiple of " +
                     std::to_string(kScaleBlock) + " elements of K, or 0 (never promote)");
  record(PromoteD{interval});
  return *this;
}

Schedule& Schedule::symmetric() {
  if (last<SymmetricD>()) throw_user_error("duplicate-directive", "symmetric: already symmetric");
  const auto& ops = def_.matmul_node().operands;
  if (ops[0] != ops[1])
    throw_user_error("symmetric", "symmetric: D = A * A^T reads one tensor as both operands, but the matmul reads '" +
                     def_.node(ops[0]).name + "' and '" + def_.node(ops[1]).name +
                     "'; write matmul(A, A) (problem ... symmetric=1, --symmetric)");
  record(SymmetricD{});
  return *this;
}

bool Schedule::is_symmetric() const { return last<SymmetricD>() != nullptr; }

Schedule& Schedule::accumulator_buffers(int buffers) {
  if (last<AccumulatorBuffersD>())
    throw_user_error("duplicate-directive", "accumulator_buffers: the accumulator buffers are already chosen");
  if (buffers < 1 || buffers > 2)
    throw_user_error("accumulator-buffers", "accumulator_buffers " + std::to_string(buffers) +
                     ": one TMEM accumulator or two (a tile's writeback reading one while the next tile's MMAs fill "
                     "the other)");
  record(AccumulatorBuffersD{buffers});
  return *this;
}

int Schedule::accumulator_buffers_of() const {
  auto* d = last<AccumulatorBuffersD>();
  return d ? d->buffers : 1;
}

std::optional<int64_t> Schedule::promotion_interval() const {
  auto* d = last<PromoteD>();
  return d ? std::optional<int64_t>(d->interval) : std::nullopt;
}

Schedule& Schedule::apply(const Directive& d) {
  std::visit(
      [this](const auto& x) {
        using D = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<D, SplitD>) split(x.axis, x.factor, x.outer, x.inner);
        if constexpr (std::is_same_v<D, MergeD>) merge(x.outer, x.inner, x.fused);
        if constexpr (std::is_same_v<D, ReorderD>) reorder(x.order);
        if constexpr (std::is_same_v<D, BindD>) bind(x.axis, x.binding);
        if constexpr (std::is_same_v<D, TileD>) tile(x.m, x.n, x.k);
        if constexpr (std::is_same_v<D, CacheReadD>) cache_read(x.tensor, x.method);
        if constexpr (std::is_same_v<D, CacheWriteD>) cache_write(x.tensor, x.place, x.method);
        if constexpr (std::is_same_v<D, InlineD>) inline_op(x.op);
        if constexpr (std::is_same_v<D, ComputeAtD>) compute_at(x.op, x.axis);
        if constexpr (std::is_same_v<D, CircularBufferD>) circular_buffer(x.axis, x.stages, x.prefetch);
        if constexpr (std::is_same_v<D, WarpSpecializeD>) warp_specialize(x.producer_regs, x.consumer_regs);
        if constexpr (std::is_same_v<D, PersistD>) persist(x.m_axis, x.n_axis, x.raster, x.group, x.fused);
        if constexpr (std::is_same_v<D, ClusterD>) cluster(x.x, x.y, x.z);
        if constexpr (std::is_same_v<D, MulticastD>) multicast(x.operand);
        if constexpr (std::is_same_v<D, MmaD>) mma(x.m, x.n, x.k, x.target);
        if constexpr (std::is_same_v<D, PingPongD>) ping_pong();
        if constexpr (std::is_same_v<D, StoreSubtileD>) store_subtile(x.cols, x.buffers);
        if constexpr (std::is_same_v<D, SplitKD>) split_k(x.splits, x.tail, x.stream);
        if constexpr (std::is_same_v<D, PromoteD>) promote(x.interval);
        if constexpr (std::is_same_v<D, SymmetricD>) symmetric();
        if constexpr (std::is_same_v<D, AccumulatorBuffersD>) accumulator_buffers(x.buffers);
      },
      d);
  return *this;
}

const CacheReadD* Schedule::declared_read(const std::string& tensor) const {
  for (const auto& d : directives_)
    if (auto* c = std::get_if<CacheReadD>(&d); c && c->tensor == tensor) return c;
  return nullptr;
}

const CacheWriteD* Schedule::declared_write(const std::string& tensor) const {
  for (const auto& d : directives_)
    if (auto* c = std::get_if<CacheWriteD>(&d); c && c->tensor == tensor) return c;
  return nullptr;
}

std::optional<CopyMethod> Schedule::read_method(const std::string& tensor) const {
  const CacheReadD* c = declared_read(tensor);
  if (!c) return std::nullopt;
  if (c->method != CopyMethod::Auto) return c->method;
  return tma_can_copy(def_, tensor) && !partner_blocks_tma(tensor) ? CopyMethod::Tma : CopyMethod::Sync;
}

// One pipeline feeds both operands: an `auto` operand TMA could load is copied synchronously when
// the other operand cannot be loaded by TMA (a kernel does not mix the two).
bool Schedule::partner_blocks_tma(const std::string& tensor) const {
  const auto& ops = def_.matmul_node().operands;
  if (def_.node(ops[0]).name != tensor && def_.node(ops[1]).name != tensor) return false;
  const std::string& other = def_.node(ops[0]).name == tensor ? def_.node(ops[1]).name : def_.node(ops[0]).name;
  const CacheReadD* c = declared_read(other);
  const bool other_tma = c && (c->method == CopyMethod::Tma || (c->method == CopyMethod::Auto && tma_can_copy(def_, other)));
  return !other_tma;
}

std::optional<CacheWriteD> Schedule::write_of(const std::string& tensor) const {
  const CacheWriteD* c = declared_write(tensor);
  if (!c) return std::nullopt;
  if (c->method != CopyMethod::Auto || tensor == def_.matmul_node().name) return *c;
  if (!tma_can_copy(def_, tensor)) return std::nullopt;
  return CacheWriteD{c->tensor, c->place, CopyMethod::Tma};
}

std::optional<std::string> copy_choice_of(const Schedule& s, const Directive& d) {
  if (auto* r = std::get_if<CacheReadD>(&d); r && r->method == CopyMethod::Auto) return s.copy_choice(r->tensor);
  if (auto* w = std::get_if<CacheWriteD>(&d); w && w->method == CopyMethod::Auto) return s.copy_choice(w->tensor);
  return std::nullopt;
}

std::optional<std::string> Schedule::copy_choice(const std::string& tensor) const {
  const CacheReadD* r = declared_read(tensor);
  const CacheWriteD* w = declared_write(tensor);
  const bool read = r && r->method == CopyMethod::Auto;
  if (!read && !(w && w->method == CopyMethod::Auto && tensor != def_.matmul_node().name)) return std::nullopt;
  const Node& n = *def_.find(tensor);
  const std::string head = read ? "cache_read " + tensor + " auto: " : "cache_write " + tensor + " shared auto: ";
  const std::string rows = row_bytes_text(def_, n);
  if (read && n.staged && !partner_blocks_tma(tensor)) {
    const double mb = double(stored_matrices(def_, n) * stored_rows(def_, n) * dtype_bytes(n.dtype)) / 1e6;
    std::ostringstream os;
    os.precision(3);
    os << head << "TMA from an aligned copy each launch makes first (" << rows << ", not the 16-byte multiple TMA "
       << "needs; the copy's rows lie " << staged_pitch(def_, n) << " elements apart: " << mb * double(row_elems(def_, n))
       << " MB read and " << mb * double(staged_pitch(def_, n)) << " MB written per launch)";
    return os.str();
  }
  if (read && tma_can_copy(def_, tensor) && partner_blocks_tma(tensor))
    return head + "a synchronous copy (" + rows + ", 16-byte aligned, but the other operand is copied synchronously "
           "and one pipeline feeds both)";
  if (tma_can_copy(def_, tensor)) return head + "TMA (" + rows + ", 16-byte aligned)";
  if (!batch_stride_aligned(def_, n))
    return head + (read ? "a synchronous element copy with bounds" : "stores from registers with bounds") +
           ", since its matrices lie " + std::to_string(batch_stride(def_, n)) +
           " elements apart, not the 16-byte multiple a batched tensor map needs";
  if (!read && def_.output_layout() == OutputLayout::ColumnMajor)
    return head + "stores from registers with bounds, since the output is column-major (a TMA store writes rows)";
  if (!read && tma_rows_aligned(def_, n) && rows_follow_runtime_size(def_, n))
    return head + "stores from registers with bounds, since the rows' length " +
           (def_.output_layout() == OutputLayout::ColumnMajor ? "M" : "N") + " is read at run time: a TMA store clips "
           "a row's end only to whole 16 bytes and would overwrite the elements past a row of another length";
  if (!read && tma_rows_aligned(def_, n))
    return head + "stores from registers with bounds, since " + rows + ": a TMA store clips a row's end only to whole "
           "16 bytes and would overwrite the elements between the rows";
  return head + (read ? "a synchronous element copy with bounds" : "stores from registers with bounds") + ", since " +
         rows + ", not the 16-byte multiple TMA needs";
}

std::optional<CircularBufferD> Schedule::circular_buffer_of() const {
  if (auto* d = last<CircularBufferD>()) return *d;
  return std::nullopt;
}
std::optional<WarpSpecializeD> Schedule::warp_roles() const {
  if (auto* d = last<WarpSpecializeD>()) return *d;
  return std::nullopt;
}
std::optional<PersistD> Schedule::persistence() const {
  if (auto* d = last<PersistD>()) return *d;
  return std::nullopt;
}
std::optional<ClusterD> Schedule::cluster_dims() const {
  if (auto* d = last<ClusterD>()) return *d;
  return std::nullopt;
}
std::optional<StoreSubtileD> Schedule::store_subtile_of() const {
  const std::string& out = def_.node(def_.output()).name;
  if (const CacheWriteD* w = declared_write(out); w && w->method == CopyMethod::Auto && !write_of(out))
    return std::nullopt;
  if (auto* d = last<StoreSubtileD>()) return *d;
  return std::nullopt;
}
std::optional<MmaD> Schedule::mma_shape() const {
  if (auto* d = last<MmaD>()) return *d;
  return std::nullopt;
}

std::vector<std::string> Schedule::multicast_operands() const {
  std::vector<std::string> out;
  for (const auto& d : directives_)
    if (auto* m = std::get_if<MulticastD>(&d)) out.push_back(m->operand);
  return out;
}

bool Schedule::is_inlined(const std::string& op) const { return inlined_.count(op) > 0; }

ConsumerMode Schedule::consumer_mode() const {
  return last<PingPongD>() ? ConsumerMode::PingPong : ConsumerMode::Cooperative;
}

int Schedule::warpgroups_per_tile() const {
  return consumer_mode() == ConsumerMode::PingPong ? 1 : consumer_warpgroups();
}

int Schedule::consumer_warpgroups() const {
  if (consumer_mode() == ConsumerMode::PingPong) return kPingPongConsumers;
  const Axis* wg = domain_.bound_to(Binding::Warpgroup);
  return wg ? static_cast<int>(wg->extent) : 1;
}

const Axis* Schedule::k_loop() const {
  for (const auto& name : domain_.leaves()) {
    const Axis& a = domain_.axis(name);
    if (a.roots == unsigned(Root::K) && a.level == Level::Tile && a.binding == Binding::Serial) return &a;
  }
  return nullptr;
}

void Schedule::retarget(Target t) {
  for (auto& d : directives_)
    if (auto* m = std::get_if<MmaD>(&d)) {
      check_mma_shape(m->m, m->n, m->k, t);  // m128 exists on sm_100a, not on sm_90a
      m->target = t;
    }
}

}  // namespace gg
