#include "codegen/plan_kernel.h"

#include <numeric>

#include "codegen/resources.h"
#include "codegen/work_units.h"
#include "codegen/target/sm100/tcgen05.h"
#include "codegen/target/sm90/wgmma.h"
#include "dsl/error.h"
#include "runtime/tensor_map.h"

namespace gg {

namespace {

void not_lowered(const std::string& what) {
  throw_user_error("not-lowered", what + " is recorded and checked, but this code generator does not lower it yet "
                   "(tutorial steps v1..v10 lower on sm_90a, v1..v10 on sm_100a); `gemmgen explain` shows its loop nests");
}

kir::EpilogueOp epilogue_op(const Definition& def, const Node& n) {
  using K = kir::EpilogueOp::Kind;
  kir::EpilogueOp op;
  switch (n.kind) {
    case OpKind::Scale: op.kind = K::Scale; op.scalar = n.scalar; break;
    case OpKind::AddScaled:
      op.kind = K::AddScaled;
      op.scalar = n.scalar;
      op.operand_type = std::string(dtype_name(def.node(n.operands[1]).dtype));
      break;
    case OpKind::AddBias:
      op.kind = n.bias_along == BiasAlong::Rows ? K::AddBiasRows : K::AddBiasCols;
      op.operand_type = std::string(dtype_name(def.node(n.operands[1]).dtype));
      break;
    case OpKind::Relu: op.kind = K::Relu; break;
    case OpKind::Gelu: op.kind = K::Gelu; break;
    case OpKind::Silu: op.kind = K::Silu; break;
    case OpKind::ActGrad:
      op.kind = K::ActGrad;
      op.activation = n.activation == OpKind::Relu ? K::Relu : n.activation == OpKind::Gelu ? K::Gelu : K::Silu;
      op.operand_type = std::string(dtype_name(def.node(n.operands[1]).dtype));
      break;
    default: GG_INTERNAL_CHECK(false, "not an epilogue op: " + n.name);
  }
  return op;
}

// Multicast of both operands: cluster X Y 1, X CTAs along m sharing B's tile and Y along n sharing
// A's, each loading its slice of the rows of both (CUTLASS's 2-D cluster shapes; cuBLAS runs 2x4
// and 4x2 clusters on mid-size shapes). Persistent K-major tiles of sm_90a only.
void plan_two_dimensional_cluster(const KernelPlan& p) {
  const std::string shape = std::to_string(p.cluster.x) + "x" + std::to_string(p.cluster.y) + "x" + std::to_string(p.cluster.z);
  const std::string head = "multicast of both operands in a " + shape + " cluster";
  if (p.cluster.x < 2 || p.cluster.y < 2 || p.cluster.z != 1)
    throw_user_error("multicast-cluster-axis", "multicast A and multicast B: " + head + " needs at least 2 CTAs along "
                     "x (the m tiles that share B) and along y (the n tiles that share A), and 1 along z; use "
                     "cluster 2 2 1 or cluster 2 1 1 with one operand multicast");
  if (p.target != Target::Sm90a) not_lowered(head + " on " + std::string(target_name(p.target)));
  if (!p.persistent) not_lowered(head + " without the persistent tile loop (persist m_o n_o)");
  if (p.split_k > 1) not_lowered(head + " with split_k (each split's workspace slots pair tiles along one dimension)");
  if (p.masked || p.contiguous || p.varlen_k || p.pointer_array)
    not_lowered(head + " over groups (a group's tiles may end inside a cluster's rows)");
  for (const rt::Operand op : {rt::Operand::A, rt::Operand::B}) {
    const SmemTileLayout& l = p.operand(op).smem;
    const int sharing = op == rt::Operand::A ? p.cluster_n_ctas() : p.cluster_m_ctas();
    const std::string name = op == rt::Operand::A ? "A" : "B";
    if (l.mn_major) not_lowered(head + " with an MN-major " + name);
    if (l.rows % (8 * sharing) != 0 || l.box_rows * sharing != l.rows)
      not_lowered(head + ": " + name + "'s " + std::to_string(l.rows) + "-row tile over the " + std::to_string(sharing) +
                  " CTAs that share it (each loads a slice of whole 8-row swizzle groups: rows a multiple of " +
                  std::to_string(8 * sharing) + ")");
  }
}

void plan_cluster(const Schedule& s, KernelPlan& p) {
  if (auto c = s.cluster_dims()) p.cluster = *c;
  p.cluster_size = p.cluster.x * p.cluster.y * p.cluster.z;
  const auto& ops = s.definition().matmul_node().operands;
  for (const auto& op : s.multicast_operands()) {
    if (op == s.definition().node(ops[0]).name) p.multicast_a = true;
    else p.multicast_b = true;
  }
  // (A's scale factors are each CTA's own: its tile's rows.)
  for (StagedOperand& o : p.operands)
    o.multicast = o.operand == rt::Operand::A ? p.multicast_a : o.operand == rt::Operand::B && p.multicast_b;
  if (!p.multicast_a && !p.multicast_b) return;
  if (ops[0] == ops[1])  // the shared operand's slice would land in both operands' stages
    not_lowered("multicast in D = A * A^T (A is read as both operands, and the cluster would share it as both)");
  if (p.cluster_2d()) {
    plan_two_dimensional_cluster(p);
    return;
  }
  if (p.cluster.y != 1 || p.cluster.z != 1)
    not_lowered("multicast of one operand in a cluster that extends along y or z (use cluster " +
                std::to_string(p.cluster_size) + " 1 1; a cluster X Y 1 shares both operands)");
  const SmemTileLayout& shared = p.operand(p.multicast_a ? rt::Operand::A : rt::Operand::B).smem;
  if (shared.mn_major) {  // each CTA loads whole swizzle atoms of the tile
    if (shared.atoms() % p.cluster_size != 0)
      not_lowered("multicast of an MN-major tile of " + std::to_string(shared.atoms()) + " swizzle atoms over " +
                  std::to_string(p.cluster_size) + " CTAs (each loads whole atoms: a multiple of " +
                  std::to_string(p.cluster_size) + " atoms of " + std::to_string(shared.atom_cols()) + " elements)");
    return;
  }
  const int64_t rows = shared.rows;
  if (rows % (8 * p.cluster_size) != 0 || shared.box_rows * p.cluster_size != rows)
    not_lowered("multicast of a " + std::to_string(rows) + "-row tile over " + std::to_string(p.cluster_size) +
                " CTAs (each loads a slice of whole 8-row swizzle groups: rows a multiple of " +
                std::to_string(8 * p.cluster_size) + ")");
}

// The promotion (promote): FP8's every 128 of K unless the schedule says otherwise, 16-bit
// operands' only where the schedule asks (an f32 output's long k loop: `auto` does).
void plan_promotion(const Schedule& s, KernelPlan& p) {
  const bool fp8 = dtype_is_fp8(p.in);
  const int64_t interval = promotion_interval_of(s);
  if (interval == 0) return;
  const std::string head = "promote " + std::to_string(interval);
  if (!fp8 && p.target != Target::Sm90a)
    not_lowered(head + " on " + std::string(target_name(p.target)) + " (tcgen05.mma accumulates in TMEM; a second "
                "accumulator there and its adds are not built)");
  if (!fp8 && !(p.tma_load && p.warp_specialized))
    not_lowered(head + " without warp-specialized TMA loads (the promoted k loop releases its stages from the "
                "consumers)");
  if (interval % p.tile_k != 0)
    throw_user_error("promote", head + ": the interval is a whole number of k tiles (" + std::to_string(p.tile_k) +
                     " elements of K each)");
  p.promotion.on = true;
  p.promotion.every = interval / p.tile_k;
  const int blocks = sm90::accumulator_shape(p).blocks;
  if (p.promotion.every > 1 && blocks > 1)
    not_lowered(head + " with " + std::to_string(blocks) +
                " 64-row blocks per consumer warpgroup (they are promoted in waves through one promotion accumulator, "
                "which holds one k tile)");
}

// FP8 on sm_100a (DeepGEMM's SM100 1D1D recipe): the block-scaled tcgen05.mma (kind::mxf8f6f4)
// applies UE8M0 factors of A's rows and B's rows per 128 of K itself, so nothing is promoted; both
// operands' factors travel with the stages in their atoms and each k tile's are copied into TMEM
// (tcgen05.cp) before its MMAs.
void plan_fp8_block_scaled(const Schedule& s, KernelPlan& p) {
  const Definition& def = s.definition();
  const std::string head = std::string(dtype_name(p.in)) + " operands on sm_100a ";
  const Node* sa = def.scale_of(def.matmul_node().operands[0]);
  const Node* sb = def.scale_of(def.matmul_node().operands[1]);
  const auto factors = [](const Node* f, const char* who) {
    if (!f) return std::string(who) + " without factors";
    if (f->scale_format == ScaleFormat::Ue8m0) return std::string();
    return std::string(who) + "'s factors per " + std::string(scale_granularity_name(f->granularity)) + " in fp32";
  };
  for (const std::string& why : {factors(sa, "A"), factors(sb, "B")})
    if (!why.empty())
      not_lowered(head + "with " + why + " (the block-scaled tcgen05.mma takes UE8M0 factors of both operands per "
                  "1x128 in their atoms: --scale-a 1x128:ue8m0 --scale-b 1x128:ue8m0)");
  if (!p.tma_load) not_lowered(head + "with synchronous copies (cache_read A and B tma)");
  if (p.tile_k != kScaleBlock)
    not_lowered(head + "with a k tile of " + std::to_string(p.tile_k) + " (a stage carries one k block's factors: "
                "tile k 128)");
  if (p.mma.m != 128 && p.mma.m != 256)  // (m256: over a CTA pair, which plan_cta_pair checks)
    not_lowered(head + "with mma m" + std::to_string(p.mma.m) + " (the block-scaled MMA is m128 on one CTA, m256 "
                "over a CTA pair)");
  if (p.tile_n % kUe8m0AtomRows != 0 || p.mma.n != p.tile_n)
    not_lowered(head + "with a tile of " + std::to_string(p.tile_n) + " columns (B's factors come in atoms of 128 rows "
                "and one MMA takes the tile's columns: tile n 128 or 256)");
  if (def.swapped()) not_lowered(head + "in the swapped orientation (the factors are laid out for the straight one)");
  if (p.contiguous || p.varlen_k || p.pointer_array)
    not_lowered(head + "with contiguous, variable-K or pointer-array groups (a group's rows or K range start inside "
                "an atom of factors; dense, batched and masked problems take them)");
  if (p.runtime_n) not_lowered(head + "with N read at run time");
  p.fp8.k_blocks = ceil_div(p.k, kScaleBlock);
  p.fp8.n_blocks = ceil_div(p.n, kScaleBlock);
  p.fp8.scale_a = sa->granularity;
  p.fp8.scale_b = sb->granularity;
  p.fp8.block_scaled = true;
}

// FP8 operands (DeepGEMM's recipe): A's factors per row and 128 of K staged by TMA (MN-major, as
// DeepGEMM lays them out), B's per 128 x 128 block read by the consumers, each k tile promoted.
void plan_fp8(const Schedule& s, KernelPlan& p) {
  const Definition& def = s.definition();
  if (!dtype_is_fp8(p.in)) return;
  const std::string in(dtype_name(p.in));
  if (p.target == Target::Sm100a) return plan_fp8_block_scaled(s, p);
  for (int operand : {0, 1})
    if (const Node* f = def.scale_of(def.matmul_node().operands[size_t(operand)]);
        f && f->scale_format == ScaleFormat::Ue8m0)
      not_lowered(in + " operands on sm_90a with UE8M0 factors (they are sm_100a's block-scaled MMA's; wgmma's "
                  "promotion takes fp32 factors: --scale-a 1x128 --scale-b 128x128)");
  if (!p.tma_load) not_lowered(in + " operands with synchronous copies (cache_read A and B tma)");
  p.fp8.k_blocks = ceil_div(p.k, kScaleBlock);
  p.fp8.n_blocks = ceil_div(p.n, kScaleBlock);
  const Node* sa = def.scale_of(def.matmul_node().operands[0]);
  const Node* sb = def.scale_of(def.matmul_node().operands[1]);
  if (sa) {
    p.fp8.scale_a = sa->granularity;
    if (sa->shape.size() == 2) p.fp8.scale_a_major = sa->layout;
  }
  if (sb) {
    p.fp8.scale_b = sb->granularity;
    if (sb->shape.size() == 2) p.fp8.scale_b_major = sb->layout;
  }
  // Factors per 128 of K apply one k block at a time; factors constant along K (per tensor, per
  // row) or none leave the interval free.
  const int64_t interval = promotion_interval_of(s);
  const auto along_k = [](const Node* f) { return f && f->shape.size() == 2; };  // per 1x128 or 128x128
  if ((along_k(sa) || along_k(sb)) && interval != kScaleBlock)
    throw_user_error("promote", "promote " + std::to_string(interval) + ": the scale factors change every " +
                     std::to_string(kScaleBlock) + " elements of K (per 1x128 or 128x128), so each k block is "
                     "promoted with its own; use promote 128 (the default)");
  if (interval == 0 && (sa || sb))
    not_lowered("promote 0 with scale factors (they are applied in the promotion; without one, the epilogue would "
                "apply them)");
  plan_promotion(s, p);
  if (!p.promotion.on) return;
  if (def.swapped())
    not_lowered(in + " operands in the swapped orientation (factors are laid out for the straight one; plan FP8 "
                "straight)");
  if (!sa && !sb) return;
  if (p.tile_k != kScaleBlock)
    not_lowered("a k tile of " + std::to_string(p.tile_k) + " with scale factors per 128 of K (each k tile's "
                "promotion applies one k block's factors: tile k 128)");
  // Batches, masked and contiguous groups: each matrix of A and B has its own factors after the
  // previous matrices' (contiguous groups share A and its factors). Pointer-array groups would need
  // factor pointers per group, variable-K groups k blocks that start mid-block.
  if (def.problem_source() == ProblemSource::PointerArray || def.problem_source() == ProblemSource::VarlenK)
    not_lowered("FP8 scale factors with pointer-array or variable-K groups (dense, batched, masked and contiguous "
                "problems take them)");
  if (p.runtime_n) not_lowered("FP8 scale factors with N read at run time");
  // A tile's columns meet at most two 128-column blocks of B's factors (an 8-column group never
  // straddles one): the tile starts at most 128 - gcd(tile n, 128) columns into a block.
  const int64_t g = std::gcd(int64_t(p.tile_n), kScaleBlock);
  if (sb && kScaleBlock - g + p.tile_n > 2 * kScaleBlock)
    not_lowered("a tile of " + std::to_string(p.tile_n) + " columns with B's factors per 128x128 block (a tile meets "
                "three blocks of factors; the promotion reads two)");
}

// An m256 tcgen05.mma over a CTA pair: what this code generator builds of it (TIRx's step 9).
void plan_cta_pair(KernelPlan& p) {
  const std::string head = "mma m256 (a tcgen05.mma over a CTA pair) ";
  if (p.cluster_size != 2 || p.cluster.x != 2)
    not_lowered(head + "in a cluster of " + std::to_string(p.cluster_size) + " CTAs (one pair: cluster 2 1 1)");
  if (!p.mma_warp)
    not_lowered(head + "without warp_specialize, or with ping-pong consumers (the leader's MMA warp issues for both "
                "CTAs and the consumers of both write back)");
  if (!p.persistent) not_lowered(head + "without persist (the MMA warp counts the tiles it hands over)");
  if (p.multicast_a || p.multicast_b)
    not_lowered(head + "with multicast (the pair's MMA already reads B's halves from both CTAs)");
  if (p.masked || p.contiguous || p.varlen_k || p.pointer_array)
    not_lowered(head + "with grouped problems (the pair's two m tiles may lie in groups with different B)");
}

void plan_pipeline(KernelPlan& p) {
  PipelinePlan& pl = p.pipeline;
  pl.full_arrivals = static_cast<int>(p.operands.size());  // each operand's load arrives once with its bytes
  pl.tx_bytes = p.tma_load ? p.stage_bytes() : 0;
  // A CTA pair's loads complete on the leader's full barrier, whose expect_tx counts both CTAs'.
  if (p.cta_pair) pl.tx_bytes *= 2;
  // Every CTA of a multicast group writes into this CTA's stage, so each of them waits for
  // this CTA's consumers to release it, and they release it in all of them.
  // (A two-dimensional cluster's: its row and its column, X + Y - 1 CTAs.)
  const int readers = p.cluster_2d()                   ? p.cluster.x + p.cluster.y - 1
                      : p.multicast_a || p.multicast_b ? p.cluster_size
                                                       : 1;
  if (p.accumulator == Place::Tmem) {
    // tcgen05.mma reads a stage asynchronously; the issuing thread's tcgen05.commit arrives on the
    // stage's empty barrier (in every CTA of a multicast group) once those MMAs completed, and the
    // stage's next fill waits for that: one arrival per CTA reading the stage.
    pl.empty_barriers = true;
    pl.empty_arrivals = p.cta_pair ? 1 : readers;  // a pair: the leader's commit, multicast to both
    pl.mma_in_flight = 0;
    return;
  }
  if (!p.warp_specialized) return;
  pl.empty_barriers = true;
  pl.release_per_warp = p.fp8.stages_scale_a() && !p.fp8.block_scaled;  // (the MMAs read block-scaled factors)
  // a ping-pong stage has one consumer reading it
  pl.empty_arrivals = warpgroups_per_tile(p) * readers * (pl.release_per_warp ? kWarpgroupThreads / 32 : 1);
  // A promoted k tile waits for its MMAs before it promotes (and reads the stage's factors).
  pl.mma_in_flight = p.promotion.on ? 0 : 1;
  pl.release_in_compute = p.promotion.on;
  pl.drain_at_exit = readers > 1;
}

}  // namespace

const StagedOperand& KernelPlan::operand(rt::Operand which) const {
  for (const StagedOperand& o : operands)
    if (o.operand == which) return o;
  GG_INTERNAL_CHECK(false, std::string("the kernel plan stages no operand ") + rt::operand_name(which));
}

int64_t KernelPlan::stage_bytes() const {
  int64_t bytes = 0;
  for (const StagedOperand& o : operands) bytes += o.smem.bytes();
  return bytes;
}

const RoleShape& compute_role(const KernelPlan& p) {
  for (const auto& r : p.roles)
    if (r.computes) return r;
  GG_INTERNAL_CHECK(false, "a kernel plan without a computing role");
}

int warpgroups_per_tile(const KernelPlan& p) { return p.ping_pong ? 1 : p.consumer_warpgroups; }

kir::ExprPtr consumer_band(const KernelPlan& p) {
  return p.ping_pong || p.consumer_warpgroups == 1 ? kir::imm(0) : kir::var("consumer");
}

rt::ElemType runtime_elem(DType t) {
  switch (t) {
    case DType::F16: return rt::ElemType::F16;
    case DType::BF16: return rt::ElemType::BF16;
    case DType::F32: return rt::ElemType::F32;
    case DType::E4M3: return rt::ElemType::E4M3;
    case DType::E5M2: return rt::ElemType::E5M2;
  }
  GG_INTERNAL_CHECK(false, "no runtime element type for " + std::string(dtype_name(t)));
}

namespace {

// The nodes a GEMM's matrices are: A, B, the output D, and C (D itself when no beta*C reads one:
// C lies as D does unless the definition gives it its own stride).
struct GemmNodes {
  const Node &a, &b, &c, &d;
};
GemmNodes gemm_nodes(const Definition& def) {
  const auto& ops = def.matmul_node().operands;
  const Node& d = def.node(def.output());
  const Node* c = &d;
  for (int id : def.epilogue())
    if (reads_c(def.node(id))) c = &def.node(def.node(id).operands[1]);
  return {def.node(ops[0]), def.node(ops[1]), *c, d};
}

}  // namespace

rt::MatrixLayouts matrix_layouts(const Definition& def) {
  const auto [a, b, c, d] = gemm_nodes(def);
  rt::MatrixLayouts l;
  l.a_mn_major = a.layout == Layout::MNMajor;
  l.b_mn_major = b.layout == Layout::MNMajor;
  l.d_column_major = def.output_layout() == OutputLayout::ColumnMajor;
  const Node* factors = def.scale_of(def.matmul_node().operands[0]);
  l.scales_ue8m0 = factors && factors->scale_format == ScaleFormat::Ue8m0;
  l.lda = leading_dim(def, a);
  l.ldb = leading_dim(def, b);
  l.ldc = leading_dim(def, c);
  l.ldd = leading_dim(def, d);
  l.batch = def.batch();
  l.stride_a = batch_stride(def, a);
  l.stride_b = batch_stride(def, b);
  l.stride_c = batch_stride(def, c);
  l.stride_d = batch_stride(def, d);
  return l;
}

rt::MatrixLayouts launch_layouts(const Definition& def) {
  rt::MatrixLayouts l = matrix_layouts(def);
  if (!def.runtime_m() && !def.runtime_n()) return l;
  const auto [a, b, c, d] = gemm_nodes(def);
  const bool m = def.runtime_m(), n = def.runtime_n();
  // A dense row spans M for an M-major A and a column-major D or C, N for an N-major B and a
  // row-major D or C; a dense matrix spans M (A), N (B) or both (C, D).
  const bool d_rows_span_m = l.d_column_major;
  if (a.ld == 0 && l.a_mn_major && m) l.lda = 0;
  if (b.ld == 0 && l.b_mn_major && n) l.ldb = 0;
  if (d.ld == 0 && (d_rows_span_m ? m : n)) l.ldd = 0;
  if (c.ld == 0 && (d_rows_span_m ? m : n)) l.ldc = 0;
  // (A stride of 0 stays: one matrix for every batch, as contiguous groups share A, C and D.)
  if (a.batch_stride < 0 && m && l.stride_a != 0) l.stride_a = -1;
  if (b.batch_stride < 0 && n && l.stride_b != 0) l.stride_b = -1;
  if (c.batch_stride < 0 && l.stride_c != 0) l.stride_c = -1;
  if (d.batch_stride < 0 && l.stride_d != 0) l.stride_d = -1;
  return l;
}

kir::ExprPtr layout_value(const KernelPlan& p, int64_t rt::MatrixLayouts::*field, const std::string& arg) {
  return p.launch_layouts.*field == p.layouts.*field ? kir::imm(p.layouts.*field) : kir::var(arg);
}

rt::TensorMapSpec tiled_tensor_map(const KernelPlan& p, rt::Operand operand, const SmemTileLayout& layout) {
  const int sb = layout.swizzle_bytes;
  GG_INTERNAL_CHECK(sb == 32 || sb == 64 || sb == 128, "bad swizzle width");
  const bool input = operand == rt::Operand::A || operand == rt::Operand::B;
  const DType elem = input ? p.in : p.out;
  GG_INTERNAL_CHECK(layout.elem_bytes == dtype_bytes(elem), "tensor map and layout disagree on the element size");
  const rt::StoredMatrix stored = rt::stored_matrix(p.layouts, operand, p.m, p.n, p.k);
  GG_INTERNAL_CHECK(stored.transposed == layout.mn_major || !input, "tensor map and shared layout disagree on the major");
  rt::TensorMapSpec t;
  t.operand = operand;
  t.elem = runtime_elem(elem);
  t.transposed = stored.transposed;
  // A kernel that reads a size at run time has its maps' extents resolved at each launch (rows and
  // cols 0); the launch checks the compiled sizes instead.
  const bool sized = p.runtime_m || p.runtime_n || p.k_per_unit();  // variable K: K too
  t.rows = sized ? 0 : static_cast<uint64_t>(stored.rows);
  t.cols = sized ? 0 : static_cast<uint64_t>(stored.cols);
  t.staged = (operand == rt::Operand::A && p.staged_a) || (operand == rt::Operand::B && p.staged_b);
  const rt::StoredMatrix read = t.staged ? rt::staged_matrix(stored, t.elem) : stored;  // what the map reads
  t.row_stride = static_cast<uint64_t>(read.row_stride);
  t.batches = static_cast<uint64_t>(read.batches);
  t.batch_stride = static_cast<uint64_t>(read.batch_stride);
  t.box_rows = static_cast<uint32_t>(layout.box_rows);
  t.box_cols = static_cast<uint32_t>(layout.atom_cols());
  t.swizzle = sb == 128 ? rt::Swizzle::B128 : sb == 64 ? rt::Swizzle::B64 : rt::Swizzle::B32;
  return t;
}

rt::TensorMapSpec scale_tensor_map(const KernelPlan& p, rt::Operand operand, const SmemTileLayout& layout) {
  const rt::StoredMatrix stored = rt::stored_matrix(p.layouts, operand, p.m, p.n, p.k);
  rt::TensorMapSpec t;
  t.operand = operand;
  t.elem = rt::ElemType::F32;
  if (p.layouts.scales_ue8m0) {  // one atom (128 words) per box; its rows follow M or N
    const bool runtime = operand == rt::Operand::ScaleA ? p.runtime_m : p.runtime_n;
    t.rows = runtime ? 0 : static_cast<uint64_t>(stored.rows);
    t.cols = runtime ? 0 : static_cast<uint64_t>(stored.cols);
    t.row_stride = static_cast<uint64_t>(stored.row_stride);
    t.batches = static_cast<uint64_t>(stored.batches);
    t.batch_stride = static_cast<uint64_t>(stored.batch_stride);
    t.box_rows = 1;
    t.box_cols = static_cast<uint32_t>(layout.row_bytes / layout.elem_bytes);
    t.swizzle = rt::Swizzle::None;
    return t;
  }
  t.transposed = true;
  t.rows = p.runtime_m ? 0 : static_cast<uint64_t>(stored.rows);  // resolved at each launch
  t.cols = p.runtime_m ? 0 : static_cast<uint64_t>(stored.cols);
  t.row_stride = static_cast<uint64_t>(stored.row_stride);
  t.batches = static_cast<uint64_t>(stored.batches);
  t.batch_stride = static_cast<uint64_t>(stored.batch_stride);
  t.box_rows = 1;
  // A contiguous group's stage (the tile's rows and 32 more, scale_a_layout) may pass TMA's 256
  // elements per box: it is loaded in boxes of 32 factors, each 128 bytes.
  t.box_cols = static_cast<uint32_t>(p.contiguous ? kScaleBoxCols : layout.mn_extent());
  t.swizzle = rt::Swizzle::None;
  return t;
}

void limit_box_rows(kir::ExprPtr& row, kir::ExprPtr& third, const kir::ExprPtr& row_end, int64_t box_rows) {
  GG_INTERNAL_CHECK(third == nullptr, "a row-limited box has no matrix coordinate");
  const kir::ExprPtr rows = kir::imm(box_rows);
  const kir::ExprPtr kept = kir::min(kir::max(row_end - row, kir::imm(0)), rows);
  third = row + kept;
  row = rows - kept;
}

kir::ExprPtr batch_offset(const KernelPlan& p, rt::Operand operand, const kir::ExprPtr& batch) {
  const rt::StoredMatrix stored = rt::stored_matrix(p.layouts, operand, p.m, p.n, p.k);
  if (!batch || stored.batches == 1) return nullptr;
  switch (operand) {
    case rt::Operand::A: return batch * layout_value(p, &rt::MatrixLayouts::stride_a, "args.stride_a");
    case rt::Operand::B: return batch * layout_value(p, &rt::MatrixLayouts::stride_b, "args.stride_b");
    case rt::Operand::C: return batch * layout_value(p, &rt::MatrixLayouts::stride_c, "args.stride_c");
    case rt::Operand::D:
    case rt::Operand::Aux: return batch * layout_value(p, &rt::MatrixLayouts::stride_d, "args.stride_d");
    case rt::Operand::ScaleA:
    case rt::Operand::ScaleB: return nullptr;  // the factors' maps have their own batch dimension
  }
  return nullptr;
}

kir::ExprPtr tensor_map_batch(const KernelPlan& p, rt::Operand operand, const kir::ExprPtr& batch) {
  if (p.pointer_array) return nullptr;  // each group's own 2-D map (tensor_map_group)
  return batch && rt::stored_matrix(p.layouts, operand, p.m, p.n, p.k).batches > 1 ? batch : nullptr;
}

kir::ExprPtr tensor_map_group(const KernelPlan& p, const kir::ExprPtr& batch) {
  return p.pointer_array ? (batch ? batch : kir::imm(0)) : nullptr;
}

Kernel plan_kernel(const Schedule& s, const ScheduleAnalysis& analysis) {
  const Definition& def = s.definition();
  const Domain& dom = s.domain();
  KernelPlan p;
  auto mma = s.mma_shape();
  GG_INTERNAL_CHECK(mma.has_value(), "validate_schedule lets no schedule without mma through");
  p.mma = *mma;
  p.target = mma->target;
  p.accumulator = p.target == Target::Sm100a ? Place::Tmem : Place::Registers;
  if (s.cluster_dims() && !s.warp_roles()) not_lowered("a cluster without warp_specialize");
  const Node& mm = def.matmul_node();
  p.in = def.input_dtype();
  for (int id : mm.operands)
    if (def.node(id).layout == Layout::MNMajor && dtype_bytes(p.in) != 2)
      not_lowered("an MN-major " + std::string(dtype_name(p.in)) + " operand ('" + def.node(id).name +
                  "'; WGMMA transposes 16-bit operands only)");
  if (def.batch() > 1 && !s.persistence() && dom.bound_to(Binding::BlockZ))
    not_lowered("a batch of " + std::to_string(def.batch()) + " matrices beside tile axis '" +
                dom.bound_to(Binding::BlockZ)->name + "' bound to block.z (the batch index takes blockIdx.z)");
  p.layouts = matrix_layouts(def);
  p.launch_layouts = launch_layouts(def);
  p.out = def.output_dtype();
  p.m = def.m();
  p.n = def.n();
  p.k = def.k();
  p.runtime_m = def.runtime_m();
  p.runtime_n = def.runtime_n();
  p.masked = def.problem_source() == ProblemSource::Masked;
  if (p.masked && def.swapped())
    not_lowered("masked groups in the swapped orientation (the rows in use would be the kernel's columns)");
  if (p.masked && s.split_k_tail()) not_lowered("masked groups with split_k ... tail");
  p.contiguous = def.problem_source() == ProblemSource::Contiguous;
  if (p.contiguous && def.swapped())
    not_lowered("contiguous groups in the swapped orientation (the groups' rows would be the kernel's columns)");
  if (p.contiguous && s.split_k_tail()) not_lowered("contiguous groups with split_k ... tail");
  p.varlen_k = def.problem_source() == ProblemSource::VarlenK;
  if (p.varlen_k && def.swapped()) not_lowered("variable-K groups in the swapped orientation");
  if (p.varlen_k && s.split_k_of() > 1) not_lowered("variable-K groups with split_k (each group has its own K)");
  if (p.varlen_k)
    for (int id : def.matmul_node().operands)
      if (def.node(id).layout != Layout::MNMajor)
        not_lowered("variable-K groups with a K-major operand ('" + def.node(id).name + "'; a K range is a range of an "
                    "MN-major operand's rows, which TMA boxes can stop at)");
  p.pointer_array = def.problem_source() == ProblemSource::PointerArray;
  if (p.pointer_array) {
    // Every group has its own sizes: the kernel reads M, N and K of each at run time.
    p.runtime_m = p.runtime_n = true;
    const auto refuse = [](const std::string& what) { not_lowered("pointer-array groups " + what); };
    if (def.swapped()) refuse("in the swapped orientation");
    if (!s.persistence())
      refuse("on a grid of tiles (the units' count follows the groups' sizes; persist the tile loop)");
    if (s.split_k_of() > 1) refuse("with split_k (each group has its own K)");
    if (s.consumer_mode() == ConsumerMode::PingPong)
      refuse("with ping-pong consumers (a consumer passes over the other's units, whose k tiles follow their own "
             "group's K)");
    if (s.cluster_dims()) refuse("in a cluster (each CTA of a cluster would need its own group's maps for a shared box)");
    if (def.output_layout() == OutputLayout::ColumnMajor)
      refuse("with a column-major D (its tiles are stored from registers, through a pointer per group)");
    for (int id : def.epilogue())
      if (reads_c(def.node(id)) || def.node(id).kind == OpKind::AddBias)
        refuse("with an epilogue reading '" + def.node(def.node(id).operands[1]).name +
               "' (C and bias have no per-group pointers yet)");
  }
  if (p.contiguous && !s.persistence())
    not_lowered("contiguous groups on a grid of tiles (the units' count follows the groups' offsets; persist the "
                "tile loop)");
  p.tile_m = static_cast<int>(dom.tile_extent(Root::M));
  p.tile_n = static_cast<int>(dom.tile_extent(Root::N));
  p.tile_k = static_cast<int>(dom.tile_extent(Root::K));
  p.consumer_warpgroups = s.consumer_warpgroups();
  p.ping_pong = s.consumer_mode() == ConsumerMode::PingPong;
  p.persistent = s.persistence().has_value();
  p.roles = analysis.roles;
  p.warp_specialized = s.warp_roles().has_value();
  p.threads = total_threads(p.roles);

  for (const auto& name : dom.leaves()) {
    const Axis& a = dom.axis(name);
    if (a.level == Level::Intra && a.binding != Binding::None && a.binding != Binding::Warpgroup)
      not_lowered("binding intra-tile axis '" + name + "' to " + std::string(binding_name(a.binding)) +
                  " (the MMA instruction maps threads inside a tile)");
    if (a.level == Level::Tile && a.binding == Binding::Serial && a.roots != unsigned(Root::K))
      not_lowered("a serial loop over output tiles ('" + name + "')");
    if (a.level == Level::Tile && a.binding == Binding::Unroll)  // the k loop is generated for `serial` only
      not_lowered("an unrolled loop over " + std::string(a.roots == unsigned(Root::K) ? "k" : "output") + " tiles ('" +
                  name + (a.roots == unsigned(Root::K) ? "'; bind it serial)" : "'; bind it to a block index)"));
    if (a.level == Level::Tile && a.binding == Binding::Cluster) not_lowered("binding '" + name + "' to cluster");
  }
  if (const Axis* kl = s.k_loop()) {
    p.k_loop = kl->name;
    p.k_tiles = kl->extent;
  }
  p.operands = {{rt::Operand::A, kir::Buffer::A, analysis.a, "m_tile", "args.m", "a", &rt::MatrixLayouts::lda,
                 "args.lda", false},
                {rt::Operand::B, kir::Buffer::B, analysis.b, "n_tile", "args.n", "b", &rt::MatrixLayouts::ldb,
                 "args.ldb", false}};
  for (const StagedOperand& o : p.operands)
    if (o.smem.mn_major && o.smem.swizzle_bytes == 0)
      not_lowered("an MN-major operand tile " + std::to_string(o.smem.mn_extent()) + " elements wide (rows of " +
                  std::to_string(o.smem.row_bytes) + " bytes; swizzled MN-major rows are 32, 64 or a multiple of 128 bytes)");
  const SmemTileLayout& a_smem = p.operand(rt::Operand::A).smem, &b_smem = p.operand(rt::Operand::B).smem;
  const SmemTileLayout& k_rows = !a_smem.mn_major ? a_smem : b_smem;  // a layout whose rows run along K
  if (!k_rows.mn_major && k_rows.swizzle_bytes == 0) {
    const int in_bytes = dtype_bytes(p.in);
    not_lowered("a k tile of " + std::to_string(p.tile_k) + " elements (rows of " +
                std::to_string(k_rows.row_bytes) + " bytes; swizzled operand rows are 32, 64 or a multiple of 128 "
                "bytes: k tiles of " + std::to_string(32 / in_bytes) + ", " + std::to_string(64 / in_bytes) +
                " or a multiple of " + std::to_string(128 / in_bytes) + ")");
  }
  // Consumer warpgroups own bands of rows; a band of columns each would need per-warpgroup B
  // descriptors, accumulator columns and store offsets, which the generator does not have.
  if (const Axis* wg = dom.bound_to(Binding::Warpgroup); wg != nullptr && wg->roots == unsigned(Root::N))
    not_lowered("splitting the tile's columns among consumer warpgroups ('" + wg->name +
                "' is split from n; split m_i instead, as tutorial v10 does)");
  const int sharers = warpgroups_per_tile(p);
  if (p.tile_m % (64 * sharers) != 0)
    not_lowered("a tile of " + std::to_string(p.tile_m) + " rows (a multiple of 64 per consumer warpgroup)");
  if (p.mma.n != p.tile_n)
    not_lowered("an mma n of " + std::to_string(p.mma.n) + " narrower than the tile's " + std::to_string(p.tile_n) +
                " columns");
  if (p.tile_m > 256 || p.tile_n > 256) not_lowered("a TMA box over 256 rows");

  if (auto cb = s.circular_buffer_of()) {
    p.pipeline.stages = cb->stages;
    p.pipeline.prefetch = cb->prefetch;
  }
  auto a_read = s.read_method(def.node(mm.operands[0]).name), b_read = s.read_method(def.node(mm.operands[1]).name);
  bool a_tma = a_read == CopyMethod::Tma, b_tma = b_read == CopyMethod::Tma;
  if (a_tma != b_tma) not_lowered("TMA for one operand and a synchronous copy for the other");
  p.tma_load = a_tma;
  plan_fp8(s, p);
  if (!dtype_is_fp8(p.in)) plan_promotion(s, p);
  if (p.fp8.stages_scale_a())  // staged beside A: the producer's TMA box per stage, counted in its bytes
    p.operands.push_back({rt::Operand::ScaleA, kir::Buffer::ScaleA, *analysis.scale_a, "m_tile", "args.m", "scale_a",
                          nullptr, "", false});
  if (p.fp8.block_scaled)  // and B's atoms beside B
    p.operands.push_back({rt::Operand::ScaleB, kir::Buffer::ScaleB, *analysis.scale_b, "n_tile", "args.n", "scale_b",
                          nullptr, "", false});
  if (p.varlen_k && !p.tma_load)
    not_lowered("variable-K groups with synchronous copies (a group's K range stops a TMA box; cache_read A and B tma)");
  if (p.pointer_array && !p.tma_load)
    not_lowered("pointer-array groups with synchronous copies (each group's operands are read through its own tensor "
                "maps; cache_read A and B tma)");
  if (p.varlen_k && p.k_loop.empty())
    not_lowered("variable-K groups with K in one tile (each group runs its own k loop; split k into k tiles)");
  p.operand_rows_aligned = vector_rows(def, def.node(mm.operands[0])) && vector_rows(def, def.node(mm.operands[1]));
  p.staged_a = p.tma_load && def.node(mm.operands[0]).staged;
  p.staged_b = p.tma_load && def.node(mm.operands[1]).staged;
  if (p.pipeline.stages > 1 && !p.tma_load) {
    auto why = s.copy_choice(def.node(mm.operands[0]).name);
    not_lowered("a circular buffer fed by synchronous copies (" + (why ? *why : "use cache_read tma") + ")");
  }
  auto out_write = s.write_of(def.node(def.output()).name);
  p.tma_store = out_write && out_write->method == CopyMethod::Tma;
  p.staging = analysis.staging;
  if (p.tma_store && p.staging.transposed) {  // a column-major output staged transposed
    const std::string what = "a TMA store of a column-major output";
    if (p.contiguous) not_lowered(what + " with contiguous groups (their rows end mid-box along the store's columns)");
    GG_INTERNAL_CHECK(p.accumulator == Place::Tmem || (dtype_bytes(p.out) == 2 && p.staging.cols % 16 == 0),
                      "a transposed staging that stmatrix.trans cannot write passed validation");
  }
  if (p.tma_store && p.staging.buffer.swizzle_bytes == 0)
    not_lowered("a TMA-stored tile of " + std::to_string(p.tile_n) + " columns (" +
                std::to_string(p.tile_n * dtype_bytes(p.out)) + "-byte rows; staged rows must be a multiple of 32 bytes)");
  if (out_write && !p.tma_store) not_lowered("staging the output in shared memory without a TMA store");
  if (p.pointer_array && !p.tma_store)
    not_lowered("pointer-array groups with the output stored from registers (each group's D is written through its "
                "own tensor map; cache_write D staged with a TMA store)");
  if (auto acc = s.write_of(def.matmul_node().name); acc && acc->place == Place::Tmem)
    not_lowered("the accumulator in TMEM on sm_90a");

  int c_reads = 0, bias_reads = 0;
  if (p.layouts.d_column_major)
    for (int id : def.epilogue())
      if (reads_c(def.node(id)))
        not_lowered("an epilogue reading '" + def.node(def.node(id).operands[1]).name +
                    "' through C's path beside a column-major output");
  // Reductions of the value at node `id`, after `after` ops of the chain.
  auto reduce_at = [&](int id, size_t after) {
    for (const Reduction& r : def.reductions())
      if (r.node == id)
        p.epilogue.reductions.push_back({r.along == ReduceAlong::Rows ? kir::EpilogueReduction::Along::Rows
                                                                      : kir::EpilogueReduction::Along::Cols,
                                         r.op == ReduceOp::SumSquares, static_cast<int>(after)});
  };
  reduce_at(mm.id, 0);
  int prev = mm.id;  // the epilogue is generated as a chain acc -> op -> ... -> output
  for (int id : def.epilogue()) {
    const Node& n = def.node(id);
    if (n.operands[0] != prev)
      not_lowered("an epilogue that is not a chain from the accumulator ('" + n.name + "' reads '" +
                  def.node(n.operands[0]).name + "', not '" + def.node(prev).name + "')");
    if (n.operands.size() > 1 && def.node(n.operands[1]).kind != OpKind::Input)
      not_lowered("an epilogue operand that is not an input tensor ('" + n.name + "' reads '" +
                  def.node(n.operands[1]).name + "')");
    prev = id;
    c_reads += reads_c(n);
    bias_reads += n.kind == OpKind::AddBias;
    if (n.kind == OpKind::Cast && id != def.output()) not_lowered("a cast in the middle of the epilogue ('" + n.name + "')");
    if (n.kind != OpKind::Cast) p.epilogue.ops.push_back(epilogue_op(def, n));
    if (id == def.saved_output()) p.epilogue.saved_after = static_cast<int>(p.epilogue.ops.size());
    reduce_at(id, p.epilogue.ops.size());
  }
  if (def.saved_output() == mm.id) p.epilogue.saved_after = 0;
  if (def.saved_output() >= 0) {
    const std::string saved = "a saved output ('" + def.node(def.saved_output()).name + "' as '" + def.saved_name() + "')";
    if (!p.epilogue.saves()) not_lowered(saved + " off the epilogue's chain from the accumulator");
    if (p.pointer_array) not_lowered(saved + " with pointer-array groups (no per-group pointer for it)");
  }
  p.epilogue.staged_c = stages_c_in_smem(s);  // the resource summary reserves c_bar on the same condition
  p.split_k = s.split_k_of();
  p.split_k_tail = s.split_k_tail();
  p.split_k_stream = s.split_k_stream();
  if (p.split_k_stream) {
    if (auto c = s.cluster_dims(); c && c->x * c->y * c->z > 1)
      not_lowered("split_k ... stream in a cluster (a CTA's k ranges are its own, not shared with its pair)");
    const int64_t tile_k = s.domain().tile_extent(Root::K);
    p.stream_pieces = stream_k_max_pieces((p.k + tile_k - 1) / tile_k, p.split_k);
  }
  if (p.split_k > 1) p.epilogue.commit = EpiloguePlan::Commit::SplitK;
  if (s.is_symmetric()) {
    p.epilogue.commit = EpiloguePlan::Commit::Symmetric;
  }
  if (p.split_k > 1 && p.ping_pong) not_lowered("split_k with ping-pong consumers");
  if (!def.reductions().empty()) {
    const Reduction& r = def.reductions().front();
    const std::string what = "a reduction ('" + def.node(r.node).name + "' as '" + r.name + "')";
    if (p.epilogue.reductions.size() != def.reductions().size())
      not_lowered(what + " off the epilogue's chain from the accumulator");
    if (p.masked || p.contiguous || p.varlen_k || p.pointer_array)
      not_lowered(what + " with grouped problems (a group's bands are not the tile grid's)");
    if (p.split_k > 1) not_lowered(what + " with split_k (the tile's splits hold partial sums, not its values)");
    if (dtype_is_fp8(def.input_dtype())) not_lowered(what + " of an FP8 product");
    if (p.epilogue.commit == EpiloguePlan::Commit::Symmetric)
      not_lowered(what + " with symmetric (a mirrored tile's rows are another band's columns)");
    if (p.ping_pong) not_lowered(what + " with ping-pong consumers (each consumer's tile would take its own ticket)");
  }
  if (p.split_k > 1 && p.epilogue.staged_c) not_lowered("split_k with C staged in shared memory");
  // GgGemmArgs carries one C and one bias pointer.
  if (c_reads > 1 || bias_reads > 1) not_lowered("an epilogue reading more than one C or bias tensor");

  // Shared memory: the layout the resource summary checked against the device limit.
  const ResourceSummary& resources = analysis.resources;
  p.tmem_accumulators = resources.tmem_accumulators;
  p.tmem_double_buffered = resources.tmem_double_buffered;
  p.mma_warp = resources.mma_warp;
  p.cta_pair = cta_pair_mma(s);
  plan_cluster(s, p);
  if (p.cta_pair) plan_cta_pair(p);
  if ((p.masked || p.contiguous) && p.multicast_b && p.cluster_size > 1)
    not_lowered(std::string(p.masked ? "masked" : "contiguous") + " groups with B multicast (a cluster's CTAs pair m tiles, which a group's rows in use may "
                "split; multicast A pairs n tiles)");
  plan_pipeline(p);
  for (const SmemItem& item : resources.smem) {
    if (item.symbol.empty()) continue;
    if (item.symbol != "mbarriers") {
      p.smem.push_back({item.symbol, item.offset, item.bytes, item.what + ": " + item.formula});
      continue;
    }
    // The mbarrier region holds the full barriers, then the empty ones, then C's.
    int64_t full_bytes = 8 * p.pipeline.stages, at = item.offset;
    if (p.tma_load) {
      p.smem.push_back({kir::barrier_name(kir::Barrier::Full), at, full_bytes, "mbarriers: a stage's loads landed"});
      at += full_bytes;
    }
    if (p.pipeline.empty_barriers) {
      p.smem.push_back({kir::barrier_name(kir::Barrier::Empty), at, full_bytes, "mbarriers: a stage was released"});
      at += full_bytes;
    }
    if (p.epilogue.staged_c) {
      p.smem.push_back({kir::barrier_name(kir::Barrier::C), at, 8 * p.staging.count(), "mbarriers: C landed in a staging buffer"});
      at += 8 * p.staging.count();
    }
    if (p.accumulator == Place::Tmem) {
      const int accumulators = sm100::tmem_accumulators(p);
      p.smem.push_back({kir::barrier_name(kir::Barrier::MmaDone), at, 8 * accumulators,
                        p.tmem_double_buffered ? "mbarriers: the MMAs into a TMEM accumulator buffer completed"
                        : accumulators > 1 ? "mbarriers: the MMAs into a consumer's TMEM accumulator completed"
                                         : "mbarriers: the MMAs into the TMEM accumulator completed"});
      at += 8 * accumulators;
    }
    if (p.mma_warp) {
      p.smem.push_back({kir::barrier_name(kir::Barrier::AccEmpty), at, 8 * p.tmem_accumulators,
                        "mbarriers: the writeback read a TMEM accumulator buffer"});
      at += 8 * p.tmem_accumulators;
    }
    GG_INTERNAL_CHECK(at - item.offset == item.bytes, "resource summary and kernel plan disagree on the mbarriers");
  }
  GG_INTERNAL_CHECK(p.smem.size() >= p.operands.size(), "resource summary and kernel plan disagree on the operand stages");
  for (size_t i = 0; i < p.operands.size(); ++i)
    GG_INTERNAL_CHECK(p.smem[i].bytes == p.pipeline.stages * p.operands[i].smem.bytes(),
                      "resource summary and kernel plan disagree on the operand stages");
  p.smem_bytes = resources.smem_bytes;
  p.tmem_columns = resources.tmem_alloc_columns;
  p.tmem_scale_column0 = resources.tmem_columns - resources.tmem_scale_columns;
  GG_INTERNAL_CHECK((p.accumulator == Place::Tmem) == (p.tmem_columns > 0), "a TMEM accumulator without TMEM columns");

  Kernel k;
  k.plan = p;
  k.launch.block = {static_cast<unsigned>(p.threads), 1, 1};
  k.launch.cluster = {static_cast<unsigned>(p.cluster.x), static_cast<unsigned>(p.cluster.y),
                      static_cast<unsigned>(p.cluster.z)};
  if (p.cluster_2d()) k.launch.cluster = {static_cast<unsigned>(p.cluster_size), 1, 1};  // ranks along x
  // The grid the resource summary sized: one CTA per tile, or (persistent) at most one per SM.
  k.launch.grid = {static_cast<unsigned>(resources.grid.x), static_cast<unsigned>(resources.grid.y),
                   static_cast<unsigned>(resources.grid.z)};
  k.launch.persistent = p.persistent;
  k.launch.dynamic_smem_bytes = static_cast<unsigned>(p.smem_bytes);
  k.launch.layouts = p.launch_layouts;
  // The swapped orientation (D^T = B * A^T) is an ordinary kernel; its launches exchange the operands.
  k.launch.swapped = s.definition().swapped();
  k.launch.masked = p.masked;
  k.launch.contiguous = p.contiguous;
  k.launch.varlen_k = p.varlen_k;
  k.launch.pointer_array = p.pointer_array;
  k.launch.reads_scale_b = p.fp8.scale_b.has_value();
  k.launch.reads_scale_a = p.fp8.scale_a.has_value();
  const ScaleFormat format = p.fp8.block_scaled ? ScaleFormat::Ue8m0 : ScaleFormat::F32;
  if (p.fp8.scale_a) k.launch.scale_a_array = scale_array_text(*p.fp8.scale_a, p.fp8.scale_a_major, "M", format);
  if (p.fp8.scale_b) k.launch.scale_b_array = scale_array_text(*p.fp8.scale_b, p.fp8.scale_b_major, "N", format);
  k.launch.writes_aux = p.epilogue.saves();
  k.launch.symmetric = p.epilogue.commit == EpiloguePlan::Commit::Symmetric;
  // A workspace slot per output tile of the batch: counted for the planned problem, and as the
  // kernel counts them where it reads a size at run time.
  const rt::SizedCount slots = workspace_slots(k.plan);
  if (p.split_k > 1) {
    const auto acc = sm90::accumulator_shape(p);
    k.plan.epilogue.workspace.slots = static_cast<int64_t>(slots.at(p.m, p.n));
    k.plan.epilogue.workspace.splits = p.split_k_stream ? p.stream_pieces : p.split_k;  // a tile's most sharers
    // Each thread's partial sums: its wgmma fragment, or its TMEM lane's columns of every column set.
    k.plan.epilogue.workspace.per_thread =
        p.accumulator == Place::Tmem ? sm100::tmem_partials_per_thread(p) : acc.blocks * acc.regs;
    k.plan.epilogue.workspace.threads = warpgroups_per_tile(p) * kWarpgroupThreads;
    k.launch.workspace_bytes = static_cast<uint64_t>(k.plan.epilogue.workspace.bytes());
    k.plan.epilogue.workspace.slot_count = count_expr(slots);
  }
  if (!p.epilogue.reductions.empty()) {
    kir::ReductionWorkspace& ws = k.plan.epilogue.reduction_workspace;
    ws.slots = static_cast<int64_t>(slots.at(p.m, p.n));
    // A TMEM row's values arrive a tcgen05.ld chunk of columns at a time: a partial per chunk.
    const int row_parts = p.accumulator == Place::Tmem ? p.tile_n / sm100::tmem_chunk_columns(p, p.tile_n) : 1;
    ws.row_floats = p.epilogue.reduction(kir::EpilogueReduction::Along::Rows) ? p.tile_m * row_parts : 0;
    ws.col_floats =
        p.epilogue.reduction(kir::EpilogueReduction::Along::Cols) ? warpgroups_per_tile(p) * 4 * p.tile_n : 0;
    k.launch.workspace_bytes = static_cast<uint64_t>(ws.bytes());
    ws.slot_count = count_expr(slots);
    k.launch.reduces_rows = ws.row_floats > 0;
    k.launch.reduces_cols = ws.col_floats > 0;
  }
  // The sizes compiled in, and for a kernel that reads M or N at run time how a launch sizes its
  // grid and workspace: from the tile counts the kernel itself computes.
  k.launch.sizes =
      runtime_sizes(s, k.plan, resources.limits.resident_clusters(resources.cluster_size, resources.grid.ctas_per_sm));
  return k;
}

}  // namespace gg
