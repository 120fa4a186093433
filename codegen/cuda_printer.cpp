#include "codegen/cuda_printer.h"

#include <functional>
#include <sstream>

#include "codegen/index_math.h"
#include "dsl/error.h"
#include "runtime/device/smem_desc.h"
#include "runtime/device/tcgen05_desc.h"

namespace gg {

namespace {

using namespace kir;

std::string num(int64_t v) { return std::to_string(v); }

std::string float_literal(double v) {
  std::ostringstream os;
  os.precision(9);
  os << std::showpoint << v << "f";
  return os.str();
}

std::string smem(const SmemRef& r) {
  int64_t off = 0;
  if (is_const(r.offset, &off) && off == 0) return buffer_name(r.buffer);
  return "(" + buffer_name(r.buffer) + " + " + to_c(r.offset) + ")";
}
// The generic address of an operand's tensor map: the kernel parameter's, or (pointer-array
// groups) group `group`'s in the device array the map builder wrote.
std::string map_address(rt::Operand map, const ExprPtr& group) {
  if (!group) return "&args." + tensor_map_field(map);
  return "gg::dev::group_map(args.group_maps, " + to_c(group) + ", " + std::to_string(static_cast<int>(map)) + ")";
}

// The coordinates of a TMA box, innermost first: "col, row" (2-D) or "col, row, batch" (3-D).
std::string tma_coords(const ExprPtr& row, const ExprPtr& col, const ExprPtr& batch) {
  return to_c(col) + ", " + to_c(row) + (batch ? ", " + to_c(batch) : "");
}

std::string bar(const BarrierRef& b) { return "(" + barrier_name(b.array) + " + 8 * " + to_c(b.index) + ")"; }

class CudaPrinter : public Visitor {
 public:
  std::ostringstream os;
  int depth = 1;
  int warpgroups = 1;  // of the whole block
  std::string role = "setup";  // the warp role being printed, named in watchdog reports

  void line(const std::string& s) { os << std::string(static_cast<size_t>(depth) * 2, ' ') << s << "\n"; }
  void open(const std::string& s) {
    line(s.empty() ? "{" : s + " {");
    ++depth;
  }
  void close() {
    --depth;
    line("}");
  }

  void visit_Block(const Block& b) override { Visitor::visit_Block(b); }
  void visit_For(const For& f) override {
    if (!f.origin.empty()) line("// " + f.origin);
    if (f.unroll) line("#pragma unroll");
    if (f.rolled) line("#pragma unroll 1");
    if (f.unroll_by > 1) line("#pragma unroll " + num(f.unroll_by));
    const std::string cond = f.var + " < " + to_c(f.end) + (f.while_cond ? " && " + to_c(f.while_cond) : "");
    open("for (int " + f.var + " = " + to_c(own_begin(f)) + "; " + cond + "; " + f.var +
         " += " + to_c(own_step(f)) + ")");
    visit(f.body);
    close();
  }
  void visit_If(const If& i) override {
    open("if (" + to_c(i.cond) + ")");
    visit(i.then_body);
    if (i.else_body) {
      --depth;
      line("} else {");
      ++depth;
      visit(i.else_body);
    }
    close();
  }
  void visit_ElectOne(const ElectOne& e) override {
    open(e.each_warp ? std::string("if (gg::dev::elect_one_sync())")
                     : "if (threadIdx.x / 32 == " + to_c(e.warp) + " && gg::dev::elect_one_sync())");
    visit(e.body);
    close();
  }
  void visit_WarpRole(const WarpRole& r) override {
    if (r.first_warpgroup == 0 && r.warpgroups == warpgroups) {
      open("");
      line("// role '" + r.role + "': every warpgroup");
    } else {
      std::string end = num(r.first_warpgroup + r.warpgroups);
      open(r.warpgroups == 1 ? "if (warpgroup == " + num(r.first_warpgroup) + ")"
                             : "if (warpgroup >= " + num(r.first_warpgroup) + " && warpgroup < " + end + ")");
      line("// role '" + r.role + "': warpgroups " + num(r.first_warpgroup) + ".." + num(r.first_warpgroup + r.warpgroups - 1));
    }
    std::string outer = role;
    role = r.role;
    visit(r.body);
    role = outer;
    close();
  }
  void visit_SetMaxNReg(const SetMaxNReg& n) override {
    line(std::string("gg::dev::setmaxnreg_") + (n.increase ? "inc" : "dec") + "<" + num(n.regs) + ">();");
  }
  void visit_ClusterSync(const ClusterSync& c) override {
    line(std::string("__syncwarp();  // barrier.cluster is .aligned: the whole warp ") +
         (c.part == ClusterPart::Wait ? "waits" : "arrives") + " together");
    if (c.part == ClusterPart::Arrive) line("gg::dev::cluster_arrive_relaxed();  // fence.mbarrier_init above is the release");
    else if (c.part == ClusterPart::Wait) line("gg::dev::cluster_wait();");
    else line("gg::dev::cluster_sync();");
  }
  void visit_Comment(const Comment& c) override { line("// " + c.text); }
  void visit_Let(const Let& l) override {
    line((l.maybe_unused ? "[[maybe_unused]] " : "") + std::string(l.mutable_var ? "" : "const ") + l.type + " " + l.name +
         " = " + to_c(l.value) + ";");
  }
  void visit_Assign(const Assign& a) override { line(a.name + " = " + to_c(a.value) + ";"); }

  void visit_MbarrierInit(const MbarrierInit& n) override {
    line("gg::dev::mbarrier_init(" + bar(n.bar) + ", " + num(n.arrivals) + ");");
  }
  void visit_FenceMbarrierInit(const FenceMbarrierInit&) override { line("gg::dev::fence_mbarrier_init();"); }
  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx& n) override {
    const std::string bytes = n.leader_only ? "(cta_rank % 2 == 0 ? " + num(n.bytes) + "u : 0u)" : num(n.bytes);
    line("gg::dev::mbarrier_arrive_expect_tx(" + bar(n.bar) + ", " + bytes + ");");
  }
  void visit_MbarrierArrive(const MbarrierArrive& n) override {
    if (n.cta)
      line("gg::dev::mbarrier_arrive_cluster(" + bar(n.bar) + ", " + to_c(n.cta) + ");");
    else
      line("gg::dev::mbarrier_arrive(" + bar(n.bar) + ");");
  }
  void visit_MbarrierWait(const MbarrierWait& n) override {
    line("gg::dev::mbarrier_wait_parity(" + bar(n.bar) + ", " + to_c(n.parity) + ", \"" + barrier_name(n.bar.array) + ", role " +
         role + "\");");
  }
  void visit_TmaLoad(const TmaLoad& n) override {
    std::string operands = smem(n.dst) + ", " + map_address(n.map, n.group) + ", " + bar(n.bar) + ", " +
                           tma_coords(n.row, n.col, n.batch);
    const std::string rank = n.batch ? "3d" : "2d";
    GG_INTERNAL_CHECK(!(n.to_pair_leader && n.multicast_mask), "a pair's TMA load multicast");
    if (n.to_pair_leader)
      line("gg::dev::tma_load_" + rank + "_pair(" + operands + ", cta_rank - cta_rank % 2);");
    else if (n.multicast_mask && n.multicast_shift)
      line("gg::dev::tma_load_" + rank + "_multicast(" + operands + ", (unsigned short)(" + num(n.multicast_mask) +
           "u << " + to_c(n.multicast_shift) + "));");
    else if (n.multicast_mask)
      line("gg::dev::tma_load_" + rank + "_multicast(" + operands + ", " + num(n.multicast_mask) + ");");
    else
      line("gg::dev::tma_load_" + rank + "(" + operands + ");");
  }
  void visit_TmaStore(const TmaStore& n) override {
    line(std::string("gg::dev::tma_store_") + (n.batch ? "3d" : "2d") + "(" + map_address(n.map, n.group) + ", " +
         smem(n.src) + ", " + tma_coords(n.row, n.col, n.batch) + ");");
  }
  void visit_AcquireGroupMaps(const AcquireGroupMaps& n) override {
    if (n.operand)
      line("gg::dev::acquire_group_map(" + map_address(*n.operand, n.group) + ");");
    else
      line("gg::dev::acquire_group_maps(args.group_maps, " + to_c(n.group) + ");");
  }
  void visit_BulkCommit(const BulkCommit&) override { line("gg::dev::bulk_commit_group();"); }
  void visit_BulkWaitRead(const BulkWaitRead& n) override {
    line("gg::dev::bulk_wait_group_read<" + num(n.pending) + ">();");
  }
  void visit_SyncCopyTile(const SyncCopyTile& n) override {
    const CopyIndex& ix = n.index;
    open("");  // a scope for the copy's locals
    line("// synchronous copy of a " + num(n.rows) + "x" + num(n.cols) + " tile of " + n.source + " into the " +
         num(n.swizzle_bytes) + "B-swizzled layout; out-of-bounds chunks are zero");
    line("const char* src = static_cast<const char*>(args." + n.source + ")" +
         (n.offset ? " + (long long)" + to_c(n.offset) + " * " + num(n.elem_bytes) : "") + ";");
    line("const unsigned tile_smem = " + smem(n.dst) + ";");
    open("for (int chunk = threadIdx.x; chunk < " + num(ix.chunks) + "; chunk += " + num(n.threads) + ")");
    // the chunk is read as soon as its coordinates are known, then its shared address computed
    auto address_lets = ix.chunk.begin();
    while (address_lets != ix.chunk.end() && address_lets->name != "atom") ++address_lets;
    lets({ix.chunk.begin(), address_lets});
    line("uint4 v = make_uint4(0u, 0u, 0u, 0u);");
    line("if (" + to_c(ix.inside) + ")");
    const std::string at = "src + " + to_c(ix.element) + " * " + num(n.elem_bytes);
    if (n.load_bytes == 16) line("  v = *reinterpret_cast<const uint4*>(" + at + ");");
    else  // rows not 16-byte aligned: element loads, the row's tail past the limit zero
      line("  v = gg::dev::load16_elements<" + num(n.elem_bytes) + ">(" + at + ", int(" + to_c(ix.valid) + "));");
    lets({address_lets, ix.chunk.end()});
    line("gg::dev::st_shared_v4_u32(dst, v.x, v.y, v.z, v.w);");
    close();
    close();
  }
  void visit_FenceProxyAsync(const FenceProxyAsync&) override { line("gg::dev::fence_proxy_async_shared_cta();"); }
  void visit_SyncThreads(const SyncThreads&) override { line("__syncthreads();"); }
  void visit_NamedBarrierSync(const NamedBarrierSync& n) override {
    line("gg::dev::named_barrier_sync(" + to_c(n.id) + ", " + num(n.threads) + ");");
  }
  void visit_NamedBarrierArrive(const NamedBarrierArrive& n) override {
    line("gg::dev::named_barrier_arrive(" + to_c(n.id) + ", " + num(n.threads) + ");");
  }
  void visit_AccumulatorDecl(const AccumulatorDecl& n) override {
    line("float " + n.name + "[" + num(n.blocks) + "][" + num(n.regs) + "];  // fp32 accumulator fragments");
  }
  void visit_AccumulatorZero(const AccumulatorZero& n) override {
    line("#pragma unroll");
    line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("  #pragma unroll");
    line("  for (int i = 0; i < " + num(n.regs) + "; ++i) " + n.name + "[b][i] = 0.0f;");
  }
  void visit_AccumulatorFence(const AccumulatorFence& n) override {
    line("#pragma unroll");
    line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("  #pragma unroll");
    line("  for (int i = 0; i < " + num(n.regs) + "; ++i) gg::dev::wgmma_fence_operand(" + n.name + "[b][i]);");
  }
  void visit_WgmmaFence(const WgmmaFence&) override { line("gg::dev::wgmma_fence();"); }
  // The shared-memory descriptor of operand `r` laid out as `l`, built by `maker` with swizzle code
  // `mode` (0: none, refused). Stride byte offset: 8 rows x swizzle bytes between 8-row groups.
  // Leading byte offset: unused K-major (16 by convention), MN-major the distance between swizzle
  // atoms along M or N. wgmma and tcgen05.mma agree on these; their descriptors' codes differ.
  std::string operand_desc(const char* maker, const SmemRef& r, const WgmmaLayout& l, unsigned mode,
                           const char* instruction) {
    GG_INTERNAL_CHECK(mode != 0, std::string(instruction) + " operand rows swizzled in " +
                                     std::to_string(l.swizzle_bytes) + " bytes");
    const SmemDescOffsets offsets = smem_desc_offsets(l);
    // The buffer's descriptor (loop-invariant) moved by the offset in 16-byte units where the
    // offset provably is a multiple of 16, so the per-wgmma work is one add.
    const ExprPtr units = exact_quotient(r.offset, 16);
    int64_t zero = 0;
    const bool at_base = units && is_const(units, &zero) && zero == 0;
    const std::string base = units ? buffer_name(r.buffer) : smem(r);
    const std::string desc = std::string("gg::dev::") + maker + "(" + base + ", " + num(offsets.leading) + ", " +
                             num(offsets.stride) + ", " + num(mode) + ")";
    return units && !at_base ? "gg::dev::smem_desc_add(" + desc + ", " + to_c(units) + ")" : desc;
  }
  void visit_WgmmaIssue(const WgmmaIssue& n) override {
    // The layout code is 1 (128B), 2 (64B) or 3 (32B).
    auto desc = [&](const SmemRef& r, const WgmmaLayout& l) {
      return operand_desc("make_smem_desc", r, l, gg::dev::descriptor_swizzle_mode(l.swizzle_bytes), "wgmma");
    };
    const bool transposed = n.a_layout.mn_major || n.b_layout.mn_major;
    const std::string trans =
        transposed ? "<" + num(n.a_layout.mn_major ? 1 : 0) + ", " + num(n.b_layout.mn_major ? 1 : 0) + ">" : "";
    line("gg::dev::" + wgmma_wrapper_name(n) + trans + "(" + n.accumulator + "[" + to_c(n.block) + "], " +
         desc(n.a, n.a_layout) + ", " + desc(n.b, n.b_layout) + ", " +
         (n.accumulate ? "unsigned(" + to_c(n.accumulate) + ")" : std::string("1u")) + ");");
  }
  // The fragment's rows are wgmma's (kir::PromoteAccumulator).
  void visit_PrefetchScaleFactors(const PrefetchScaleFactors& n) override {
    line("float sb_next_lo = __ldg(args.scale_b + " + to_c(n.lo) + "), sb_next_hi = " +
         (n.hi ? "__ldg(args.scale_b + " + to_c(n.hi) + ")" : std::string("sb_next_lo")) +
         ";  // B's factors of the first k step");
  }
  void visit_LoadScaleFactors(const LoadScaleFactors& n) override {
    if (n.lo != nullptr && n.lo_next != nullptr) {
      line("const float sb_lo = sb_next_lo, sb_hi = sb_next_hi;  // B's factors, loaded a k step before");
      line("sb_next_lo = __ldg(args.scale_b + " + to_c(n.lo_next) + ");");
      line(n.hi_next ? "sb_next_hi = __ldg(args.scale_b + " + to_c(n.hi_next) + ");" : "sb_next_hi = sb_next_lo;");
    } else if (n.lo) {
      line("const float sb_lo = __ldg(args.scale_b + " + to_c(n.lo) + "), sb_hi = " +
           (n.hi ? "__ldg(args.scale_b + " + to_c(n.hi) + ")" : std::string("sb_lo")) + ";  // B's factors");
    }
    if (n.cols_index) {
      line("float sbc[" + num(n.cols / 8) + "][2];  // B's factors of this thread's columns");
      line("#pragma unroll");
      line("for (int j = 0; j < " + num(n.cols / 8) + "; ++j)");
      line("  #pragma unroll");
      line("  for (int e = 0; e < 2; ++e)");
      line("    sbc[j][e] = __ldg(args.scale_b + " + to_c(n.cols_index) + " + min(" + to_c(n.cols_first) +
           " + 8 * j + 2 * (threadIdx.x % 4) + e, " + to_c(n.cols_last) + ") * " + to_c(n.cols_stride) + ");");
    }
    if (!n.row_scales && !n.a_index) return;
    line("float sa[" + num(n.blocks) + "][2];  // A's factors of this thread's rows");
    line("#pragma unroll");
    line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("  #pragma unroll");
    line("  for (int h = 0; h < 2; ++h)");
    const std::string row = to_c(n.row0) + " + 64 * b + 16 * ((threadIdx.x % 128) / 32) + (threadIdx.x % 32) / 4 + 8 * h";
    if (n.row_scales) {
      line("    sa[b][h] = __uint_as_float(gg::dev::ld_shared_u32(" + smem(*n.row_scales) + " + 4 * (" + row + ")));");
    } else if (n.a_row_block) {
      const std::string clamped = "min(" + to_c(n.a_row) + " + " + row + ", " + to_c(n.a_last) + ")";
      const std::string block = n.a_row_block == 1 ? clamped : clamped + " / " + num(n.a_row_block);
      line("    sa[b][h] = __ldg(args.scale_a + " + to_c(n.a_index) + " + " + block + " * " + to_c(n.a_row_stride) + ");");
    } else {
      line("    sa[b][h] = __ldg(args.scale_a + " + to_c(n.a_index) + ");  // one per tensor");
    }
  }
  // Columns as PromoteAccumulator's: register 4 j + e holds column 8 j + 2 (lane % 4) + e % 2.
  void visit_ScaleAccumulatorColumns(const ScaleAccumulatorColumns& n) override {
    line("// FP8: B's factors per column of D, constant along K, applied once to the finished accumulator");
    line("#pragma unroll");
    line("for (int j = 0; j < " + num(n.regs / 4) + "; ++j) {");
    line("  const long long col = (long long)(" + to_c(n.first) + ") + 8 * j + 2 * (threadIdx.x % 4), last = " +
         to_c(n.last) + ";");
    line("  const float s0 = __ldg(args.scale_b + min(col, last)), s1 = __ldg(args.scale_b + min(col + 1, last));");
    line("  #pragma unroll");
    line("  for (int b = 0; b < " + num(n.blocks) + "; ++b) {");
    line("    " + n.name + "[b][4 * j] *= s0;");
    line("    " + n.name + "[b][4 * j + 1] *= s1;");
    line("    " + n.name + "[b][4 * j + 2] *= s0;");
    line("    " + n.name + "[b][4 * j + 3] *= s1;");
    line("  }");
    line("}");
  }
  // An 8-column group never straddles a 128-column block: its factor is sb_lo or sb_hi.
  void visit_PromoteAccumulator(const PromoteAccumulator& n) override {
    line(n.row_scaled || n.col_split || n.col_scaled
             ? "// FP8 promotion: " + n.into + " += " + n.from + " x A's row factor x B's column factor"
             : "// promotion: " + n.into + " += " + n.from + " (rounded to nearest: the MMAs' own fp32 accumulation truncates)");
    const std::string from = n.block ? n.from + "[0]" : n.from + "[b]";
    line("#pragma unroll");
    line(n.block ? "for (int b = " + to_c(n.block) + "; b == " + to_c(n.block) + "; ++b) {  // one block (a wave)"
                 : "for (int b = 0; b < " + num(n.blocks) + "; ++b) {");
    line("  #pragma unroll");
    line("  for (int h = 0; h < 2; ++h) {");
    const std::string sa = n.row_scaled ? "sa[b][h]" : "1.0f";
    if (n.col_split) line("    const float s_lo = " + sa + " * sb_lo, s_hi = " + sa + " * sb_hi;");
    line("    #pragma unroll");
    line("    for (int j = 0; j < " + num(n.regs / 4) + "; ++j) {");
    // Each column its own factor (B per 1x128), or one for the 8-column group.
    const std::string s0 = n.col_scaled ? sa + " * sbc[j][0]" : "s", s1 = n.col_scaled ? sa + " * sbc[j][1]" : "s";
    if (!n.col_scaled)
      line("      const float s = " + (n.col_split ? "8 * j < " + to_c(n.col_split) + " ? s_lo : s_hi" : sa) + ";");
    line("      " + n.into + "[b][4 * j + 2 * h] = fmaf(" + from + "[4 * j + 2 * h], " + s0 + ", " + n.into +
         "[b][4 * j + 2 * h]);");
    line("      " + n.into + "[b][4 * j + 2 * h + 1] = fmaf(" + from + "[4 * j + 2 * h + 1], " + s1 + ", " + n.into +
         "[b][4 * j + 2 * h + 1]);");
    line("    }");
    line("  }");
    line("}");
  }
  void visit_WgmmaCommit(const WgmmaCommit&) override { line("gg::dev::wgmma_commit_group();"); }
  void visit_WgmmaWait(const WgmmaWait& n) override {
    line("gg::dev::wgmma_wait_group<" + num(n.pending) + ">();");
  }

  // ---- the epilogue: the index math is the node's (EpilogueIndex); this prints it, the loops
  // it runs in and what moves the values.
  void lets(const std::vector<IndexLet>& ls) {
    for (const auto& l : ls) line("const " + l.type + " " + l.name + " = " + to_c(l.value) + ";");
  }

  // The ops on value `e` (0 or 1) of the pair; a column bias was loaded into `bias<e>`.
  std::string apply_ops(const EpilogueStore& n, int e) {
    const std::string v = "v" + num(e), s = num(e);
    std::string code;
    for (const auto& op : n.ops) {
      switch (op.kind) {
        case EpilogueOp::Kind::Scale: code += v + " *= " + float_literal(op.scalar) + "; "; break;
        case EpilogueOp::Kind::AddScaled:
          // staged: C's value was read from the staging buffer into c0 / c1 (zero past the edge)
          if (n.c_staged) code += v + " += " + float_literal(op.scalar) + " * c" + s + "; ";
          else
            code += "if (" + to_c(n.index.inside[size_t(e)]) + ") " + v + " += " + float_literal(op.scalar) +
                    " * gg::dev::load_" + op.operand_type + "(args.c, " + to_c(n.index.c_element[size_t(e)]) + "); ";
          break;
        case EpilogueOp::Kind::AddBiasRows: code += v + " += bias_row; "; break;
        case EpilogueOp::Kind::AddBiasCols: code += v + " += bias" + s + "; "; break;
        case EpilogueOp::Kind::Relu: code += v + " = gg::dev::relu(" + v + "); "; break;
        case EpilogueOp::Kind::Gelu: code += v + " = gg::dev::gelu_tanh(" + v + "); "; break;
        case EpilogueOp::Kind::Silu: code += v + " = gg::dev::silu(" + v + "); "; break;
        case EpilogueOp::Kind::ActGrad: {
          const std::string grad = op.activation == EpilogueOp::Kind::Relu   ? "gg::dev::relu_grad("
                                   : op.activation == EpilogueOp::Kind::Gelu ? "gg::dev::gelu_tanh_grad("
                                                                             : "gg::dev::silu_grad(";
          // the pre-activation is read where C is: staged (c0 / c1) or from global memory
          if (n.c_staged) code += v + " *= " + grad + "c" + s + "); ";
          else
            code += "if (" + to_c(n.index.inside[size_t(e)]) + ") " + v + " *= " + grad + "gg::dev::load_" +
                    op.operand_type + "(args.c, " + to_c(n.index.c_element[size_t(e)]) + ")); ";
          break;
        }
      }
    }
    return code;
  }

  // C's pair (c0, c1) at the staged address `dst`, where TMA put it.
  void read_staged_c(const EpilogueStore& n) {
    if (dtype_bytes(parse_dtype(n.out_type)) == 2) {
      line("const unsigned c_pair = gg::dev::ld_shared_u32(dst);  // C, staged by TMA");
      line("const float c0 = gg::dev::unpack_lo_" + n.out_type + "(c_pair), c1 = gg::dev::unpack_hi_" + n.out_type +
           "(c_pair);");
    } else {
      line("const float c0 = __uint_as_float(gg::dev::ld_shared_u32(dst)), c1 = "
           "__uint_as_float(gg::dev::ld_shared_u32(dst + 4));  // C, staged by TMA");
    }
  }

  // The pair's values (v0, v1) from accumulator registers `regs` and the ops applied to them,
  // after the pair's lets `ls`: the values are read once their register is known, before the
  // staging address (`sr` on) is computed and C read there; `bias_loads` prints a column bias's.
  // (ptxas compiles this order to the same code as the printer's earlier hand-written one.)
  void pair_values(const EpilogueStore& n, const std::vector<IndexLet>& ls, const std::string& regs,
                   const std::function<void()>& bias_loads = nullptr) {
    auto staging_lets = ls.begin();
    while (staging_lets != ls.end() && staging_lets->name != "sr") ++staging_lets;
    lets({ls.begin(), staging_lets});
    if (bias_loads) bias_loads();
    if (epilogue_inputs(n).row_bias && n.fragment != Fragment::TmemLanes) row_bias_load(n);
    line("float v0 = " + regs + "[reg], v1 = " + regs + "[reg + 1];");
    lets({staging_lets, ls.end()});
    if (n.c_staged) read_staged_c(n);
    for (int e = 0; e < 2; ++e)
      if (std::string ops = apply_ops(n, e); !ops.empty()) line(ops);
  }
  void row_bias_load(const EpilogueStore& n) {
    line("const float bias_row = row < args.m ? gg::dev::load_" + epilogue_inputs(n).row_bias->operand_type +
         "(args.bias, row) : 0.0f;");
  }
  void load_col_bias(const EpilogueOp& col_bias, const std::string& col, const std::string& col1, const std::string& b0,
                     const std::string& b1) {
    std::string load = "gg::dev::load_" + col_bias.operand_type + "(args.bias, ";
    line(b0 + " = " + col + " < args.n ? " + load + col + ") : 0.0f;");
    line(b1 + " = " + col1 + " < args.n ? " + load + col1 + ") : 0.0f;");
  }

  // Stores the pair (v0, v1): to D in global memory where it lies inside, or to the staged
  // address `dst`.
  void store_pair(const EpilogueStore& n) {
    if (!n.staged) {
      for (size_t e = 0; e < 2; ++e)
        line("if (" + to_c(n.index.inside[e]) + ") gg::dev::store_" + n.out_type +
             (n.output == rt::Operand::Aux ? "(args.aux, " : "(args.d, ") +
             to_c(n.index.d_element[e]) + ", v" + num(int64_t(e)) + ");");
    } else if (n.transposed_staging && n.fragment == Fragment::TmemLanes) {  // a column of each of two buffer rows
      const bool b16 = dtype_bytes(parse_dtype(n.out_type)) == 2;
      for (int e = 0; e < 2; ++e)
        line(std::string(b16 ? "gg::dev::st_shared_u16(" : "gg::dev::st_shared_u32(") + (e ? "dst1" : "dst") + ", " +
             (b16 ? "gg::dev::float_to_" + n.out_type + "_bits(v" + num(int64_t(e)) + ")"
                  : "__float_as_uint(v" + num(int64_t(e)) + ")") +
             ");");
    } else if (dtype_bytes(parse_dtype(n.out_type)) == 2) {
      line("gg::dev::st_shared_u32(dst, gg::dev::pack2_" + n.out_type + "(v0, v1));");
    } else {
      line("gg::dev::st_shared_u32(dst, __float_as_uint(v0));");
      line("gg::dev::st_shared_u32(dst + 4, __float_as_uint(v1));");
    }
  }
  void open_unrolled(const std::string& var, const ExprPtr& begin, const ExprPtr& end) {
    line("#pragma unroll");
    open("for (int " + var + " = " + to_c(begin) + "; " + var + " < " + to_c(end) + "; ++" + var + ")");
  }
  void open_store(const EpilogueStore& n) {
    open("");
    if (n.staged) line("const unsigned staging = " + smem(n.staging) + ";");
  }

  void fragment_comment() {
    line("// epilogue on the wgmma fragment: thread t holds rows 16*(t/32) + (t%32)/4 (+8) of each 64-row");
    line("// block, columns 8*j + 2*(t%4) (+1): register 4*j + 2*h (+1) of block b is row +8*h");
  }

  // Column groups outermost: a column bias is loaded once per group and dies after the
  // group's rows, and each group frees its accumulator registers as it goes.
  void visit_EpilogueStore(const EpilogueStore& n) override {
    if (n.reduce) return n.fragment == Fragment::TmemLanes ? tmem_reducing_store(n) : reducing_store(n);
    if (n.fragment == Fragment::TmemLanes) return tmem_lanes_store(n);
    if (n.stmatrix) return stmatrix_store(n);
    const EpilogueIndex& ix = n.index;
    const EpilogueOp* col_bias = epilogue_inputs(n).col_bias;
    open_store(n);
    fragment_comment();
    lets(ix.thread);
    open_unrolled("j", ix.group_begin, ix.group_end);
    lets(ix.group);
    if (col_bias) load_col_bias(*col_bias, "col", "col1", "const float bias0", "const float bias1");
    open_unrolled("b", imm(0), imm(n.blocks));
    open_unrolled("h", imm(0), imm(2));
    if (n.staged) {
      const int bytes = dtype_bytes(parse_dtype(n.out_type));
      line("// staging: this warpgroup's rows of the subtile, chunks of " + num(n.staging_swizzle_bytes / bytes) +
           " columns, [" + num(n.warpgroup_rows) + "][" + num(n.staging_swizzle_bytes) + " bytes], " +
           num(n.staging_swizzle_bytes) + "B swizzle");
    }
    pair_values(n, ix.pair, n.accumulator + "[b]");
    store_pair(n);
    for (int i = 0; i < 4; ++i) close();
  }

  // A reduction's share of the tile: each thread sums its values of a row (of a column group)
  // inside D, the lanes holding the same row (column) add theirs by xor shuffles, and one lane
  // stores the sum at its workspace partial, fenced before the tile's ticket.
  // A column reduction out of TMEM lanes: each lane holds a row, so each column pair's values (the
  // band's rows inside the problem, else 0) are summed over the warp's 32 lanes by shuffles, and
  // lane 0 stores the warp's partials of the pair's columns.
  // A TMEM reduction share's opening, up to inside its loop over the chunk's column pairs (v0, v1:
  // the pair's values after the ops, bias included): the store's scope, what it sums, the partials,
  // the thread's lets and `before_loop`.
  void open_tmem_share(const EpilogueStore& n, const char* along, const char* how, const std::string& before_loop) {
    const EpilogueIndex& ix = n.index;
    const EpilogueOp* col_bias = epilogue_inputs(n).col_bias;
    open_store(n);
    line(std::string("// ") + along + " reduction (" + (n.reduce->squares ? "sum of squares" : "sum") +
         ") of TMEM lane threadIdx.x % 128's row: " + how);
    line("float* const partials = static_cast<float*>(args.workspace);");
    lets(ix.thread);
    line(before_loop);
    open_unrolled("p", ix.group_begin, ix.group_end);
    pair_values(n, ix.group, n.accumulator, [&] {
      if (col_bias) load_col_bias(*col_bias, "col", "col1", "const float bias0", "const float bias1");
    });
  }
  // Value e of the pair as a reduction sums it.
  static std::string reduced_term(const ReduceInto& r, int e) {
    const std::string v = "v" + num(e);
    return r.squares ? v + " * " + v : v;
  }
  void tmem_reducing_store(const EpilogueStore& n) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    GG_INTERNAL_CHECK(!n.staged, "a TMEM reduction is not staged");
    if (r.along == EpilogueReduction::Along::Rows) return tmem_row_share(n);
    open_tmem_share(n, "column", "a column's rows are the warp's 32 lanes",
                    "const bool keeps_row = " + (ix.lane_guard ? to_c(ix.lane_guard) : std::string("true")) + ";");
    for (int e = 0; e < 2; ++e) {
      line("float red" + num(e) + " = keeps_row && " + to_c(ix.inside[size_t(e)]) + " ? " + reduced_term(r, e) +
           " : 0.0f;");
      for (int mask : r.lane_masks)
        line("red" + num(e) + " += __shfl_xor_sync(0xffffffffu, red" + num(e) + ", " + num(mask) + ");");
    }
    open("if (threadIdx.x % 32 == 0)");
    line("gg::dev::store_partial(partials + " + to_c(ix.partial_col[0]) + ", red0);");
    line("gg::dev::store_partial(partials + " + to_c(ix.partial_col[1]) + ", red1);");
    close();
    close();
    line("__threadfence();  // visible device-wide before this CTA's ticket");
    close();
  }

  // A row reduction out of TMEM lanes: each thread holds its row's values of the chunk, sums those
  // inside D and stores the sum as the chunk's partial of its row (the band's rows only).
  void tmem_row_share(const EpilogueStore& n) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    open_tmem_share(n, "row", "this chunk's partial, by the thread alone", "float red = 0.0f;");
    for (int e = 0; e < 2; ++e) line("if (" + to_c(ix.inside[size_t(e)]) + ") red += " + reduced_term(r, e) + ";");
    close();
    line("if (" + (ix.lane_guard ? to_c(ix.lane_guard) : std::string("true")) +
         ") gg::dev::store_partial(partials + " + to_c(ix.partial_row) + ", red);");
    line("__threadfence();  // visible device-wide before this CTA's ticket");
    close();
  }

  void reducing_store(const EpilogueStore& n) {
    const ReduceInto& r = *n.reduce;
    const EpilogueIndex& ix = n.index;
    const EpilogueOp* col_bias = epilogue_inputs(n).col_bias;
    GG_INTERNAL_CHECK(n.fragment == Fragment::Wgmma && !n.staged, "a reduction reads the wgmma fragment, unstaged");
    const bool rows = r.along == EpilogueReduction::Along::Rows;
    auto term = [&](int e) { return r.squares ? "v" + num(e) + " * v" + num(e) : "v" + num(e); };
    auto shuffles = [&](const std::string& v) {
      for (int mask : r.lane_masks) line(v + " += __shfl_xor_sync(0xffffffffu, " + v + ", " + num(mask) + ");");
    };
    open_store(n);
    fragment_comment();
    line(std::string("// ") + (rows ? "row" : "column") + " reduction (" + (r.squares ? "sum of squares" : "sum") +
         "): lanes xor " + [&] {
           std::string m;
           for (int mask : r.lane_masks) m += (m.empty() ? "" : ", ") + num(mask);
           return m;
         }() + " hold the same " + (rows ? "row" : "column"));
    line("float* const partials = static_cast<float*>(args.workspace);");
    lets(ix.thread);
    if (rows) line("float red[" + num(n.blocks) + "][2] = {};");
    open_unrolled("j", ix.group_begin, ix.group_end);
    lets(ix.group);
    if (col_bias) load_col_bias(*col_bias, "col", "col1", "const float bias0", "const float bias1");
    if (!rows) line("float red0 = 0.0f, red1 = 0.0f;");
    open_unrolled("b", imm(0), imm(n.blocks));
    open_unrolled("h", imm(0), imm(2));
    pair_values(n, ix.pair, n.accumulator + "[b]");
    for (int e = 0; e < 2; ++e)
      line("if (" + to_c(ix.inside[size_t(e)]) + ") " + (rows ? "red[b][h]" : "red" + num(e)) + " += " + term(e) + ";");
    close();
    close();
    if (!rows) {
      shuffles("red0");
      shuffles("red1");
      open("if (threadIdx.x % 32 < 4)");
      line("gg::dev::store_partial(partials + " + to_c(ix.partial_col[0]) + ", red0);");
      line("gg::dev::store_partial(partials + " + to_c(ix.partial_col[1]) + ", red1);");
      close();
    }
    close();
    if (rows) {
      open_unrolled("b", imm(0), imm(n.blocks));
      open_unrolled("h", imm(0), imm(2));
      line("float sum = red[b][h];");
      shuffles("sum");
      line("if (threadIdx.x % 4 == 0) gg::dev::store_partial(partials + " + to_c(ix.partial_row) + ", sum);");
      close();
      close();
    }
    line("__threadfence();  // visible device-wide before this CTA's ticket (or its count of them stored)");
    close();
  }

  // Staged 16-bit output: each warp writes its 16x16 fragment blocks with one stmatrix.x4.
  void stmatrix_store(const EpilogueStore& n) {
    const EpilogueIndex& ix = n.index;
    const EpilogueOp* col_bias = epilogue_inputs(n).col_bias;
    GG_INTERNAL_CHECK(n.staged && dtype_bytes(parse_dtype(n.out_type)) == 2 && n.cols % 16 == 0 &&
                          n.staging_swizzle_bytes >= 16,
                      "stmatrix stores 16-bit 16x16 blocks of whole 16-byte rows");
    open_store(n);
    fragment_comment();
    line(n.transposed_staging
             ? "// stmatrix.x4.trans: lane l addresses column l % 8 of matrix l / 8, stored as a row (rows +8 for odd "
               "matrices, columns +8 from the third)"
             : "// stmatrix.x4: lane l addresses row l % 8 of matrix l / 8 (rows +8 for odd matrices, columns +8 from the third)");
    lets(ix.thread);
    open_unrolled("jj", ix.group_begin, ix.group_end);
    if (col_bias) {
      line("float bias_pair[2][2];");
      open_unrolled("g", imm(0), imm(2));
      lets(ix.bias_group);
      load_col_bias(*col_bias, "col_g", "col_g1", "bias_pair[g][0]", "bias_pair[g][1]");
      close();
    }
    open_unrolled("b", imm(0), imm(n.blocks));
    line("unsigned pairs[4];");
    open_unrolled("q", imm(0), imm(4));
    pair_values(n, ix.pair, n.accumulator + "[b]", [&] {
      if (col_bias) line("const float bias0 = bias_pair[q / 2][0], bias1 = bias_pair[q / 2][1];");
    });
    line("pairs[q] = gg::dev::pack2_" + n.out_type + "(v0, v1);");
    close();
    open("");
    lets(ix.matrix_row);
    line(std::string(n.transposed_staging ? "gg::dev::stmatrix_x4_trans" : "gg::dev::stmatrix_x4") +
         "(row_dst, pairs[0], pairs[1], pairs[2], pairs[3]);");
    for (int i = 0; i < 4; ++i) close();
  }

  // The epilogue on what tcgen05.ld.32x32b loaded: thread t holds TMEM lane t % 128 of the
  // column set, i.e. one row of the tile, and the store's columns in registers 0.. (column pairs).
  void tmem_lanes_store(const EpilogueStore& n) {
    const EpilogueIndex& ix = n.index;
    const EpilogueOp* col_bias = epilogue_inputs(n).col_bias;
    open_store(n);
    line("// epilogue on TMEM lane threadIdx.x % 128 (tcgen05.ld.32x32b): one row of m" + num(n.mma_m) +
         " blocks from row " + num(n.lane_row0) + ", " + num(n.cols) + " columns");
    lets(ix.thread);
    if (ix.lane_guard) open("if (" + to_c(ix.lane_guard) + ")");
    if (epilogue_inputs(n).row_bias) row_bias_load(n);
    open_unrolled("p", ix.group_begin, ix.group_end);
    pair_values(n, ix.group, n.accumulator, [&] {
      if (col_bias) load_col_bias(*col_bias, "col", "col1", "const float bias0", "const float bias1");
    });
    store_pair(n);
    close();
    if (ix.lane_guard) close();
    close();
  }

  // ---- sm_100a: Tensor Memory and tcgen05
  void visit_TmemAlloc(const TmemAlloc& n) override {
    open("if (threadIdx.x / 32 == " + to_c(n.warp) + ")");
    line("// tcgen05.alloc is .sync.aligned: the whole warp allocates, then gives up the permit to allocate more");
    const std::string pair = n.pair ? "_pair" : "";
    line("gg::dev::tmem_alloc" + pair + "(" + tmem_slot_name() + ", " + num(n.columns) + ");");
    line("gg::dev::tmem_relinquish_alloc_permit" + pair + "();");
    close();
  }
  void visit_TmemBaseLoad(const TmemBaseLoad& n) override {
    line("const unsigned " + n.name + " = gg::dev::ld_shared_u32(" + tmem_slot_name() + ");  // the TMEM accumulator's address");
  }
  void visit_TmemDealloc(const TmemDealloc& n) override {
    line("if (threadIdx.x / 32 == " + to_c(n.warp) + ") gg::dev::tmem_dealloc" + (n.pair ? "_pair" : "") + "(" + n.base +
         ", " + num(n.columns) + ");");
  }
  void visit_Tcgen05Fence(const Tcgen05Fence& n) override {
    line(std::string("gg::dev::tcgen05_fence_") + (n.after ? "after" : "before") + "_thread_sync();");
  }
  void visit_Tcgen05Mma(const Tcgen05Mma& n) override {
    // The layout code is 2 (128B), 4 (64B) or 6 (32B), in the sm_100 descriptor.
    auto desc = [&](const SmemRef& r, const WgmmaLayout& l) {
      return operand_desc("make_tcgen05_smem_desc", r, l, gg::dev::tcgen05_swizzle_mode(l.swizzle_bytes), "tcgen05.mma");
    };
    const std::string d = "gg::dev::tmem_address(" + n.base + ", " + to_c(n.lane) + ", " + to_c(n.column) + ")";
    if (n.block_scaled()) {
      GG_INTERNAL_CHECK(n.dtype == "e4m3" || n.dtype == "e5m2", "a block-scaled tcgen05.mma of " + n.dtype);
      const std::string type = n.dtype == "e4m3" ? "gg::dev::kTcgen05TypeE4M3" : "gg::dev::kTcgen05TypeE5M2";
      line(std::string("gg::dev::tcgen05_mma_mxf8f6f4") + (n.pair ? "_pair" : "") + "(" + d + ", " + desc(n.a, n.a_layout) + ", " + desc(n.b, n.b_layout) + ",");
      line("                             gg::dev::make_tcgen05_idesc_mxf8f6f4(" + type + ", " + num(n.m) + ", " +
           num(n.n) + ", " + num(n.a_layout.mn_major ? 1 : 0) + ", " + num(n.b_layout.mn_major ? 1 : 0) + ", " +
           to_c(n.scale_id) + "),");
      line("                             gg::dev::tmem_address(" + n.base + ", 0, " + to_c(n.scale_a_column) +
           "), gg::dev::tmem_address(" + n.base + ", 0, " + to_c(n.scale_b_column) + "), " + to_c(n.accumulate) + ");");
      return;
    }
    GG_INTERNAL_CHECK(n.dtype == "bf16" || n.dtype == "f16", "tcgen05.mma kind::f16 of " + n.dtype);
    const std::string type = n.dtype == "bf16" ? "gg::dev::kTcgen05TypeBF16" : "gg::dev::kTcgen05TypeF16";
    line(std::string("gg::dev::tcgen05_mma_f16") + (n.pair ? "_pair" : "") + "(gg::dev::tmem_address(" + n.base + ", " + to_c(n.lane) + ", " + to_c(n.column) +
         "), " + desc(n.a, n.a_layout) + ", " + desc(n.b, n.b_layout) + ",");
    line("                        gg::dev::make_tcgen05_idesc_f16(" + type + ", " + num(n.m) + ", " + num(n.n) + ", " +
         num(n.a_layout.mn_major ? 1 : 0) + ", " + num(n.b_layout.mn_major ? 1 : 0) + "), " + to_c(n.accumulate) + ");");
  }
  void visit_Tcgen05Copy(const Tcgen05Copy& n) override {
    line(std::string("gg::dev::tcgen05_cp_32x128b_warpx4") + (n.pair ? "_pair" : "") + "(gg::dev::tmem_address(" + n.base + ", 0, " + to_c(n.column) +
         "), gg::dev::make_tcgen05_cp_32x128b_desc(" + smem(n.src) + "));");
  }
  void visit_Tcgen05Commit(const Tcgen05Commit& n) override {
    GG_INTERNAL_CHECK(!n.pair || n.multicast_mask, "a pair's commit names the CTAs it arrives in");
    if (n.pair)
      line("gg::dev::tcgen05_commit_pair_multicast(" + bar(n.bar) + ", " + num(n.multicast_mask) + ");");
    else if (n.multicast_mask)
      line("gg::dev::tcgen05_commit_multicast(" + bar(n.bar) + ", " + num(n.multicast_mask) + ");");
    else
      line("gg::dev::tcgen05_commit(" + bar(n.bar) + ");");
  }
  void visit_TmemLoad(const TmemLoad& n) override {
    GG_INTERNAL_CHECK(n.columns == 8 || n.columns == 16 || n.columns == 32, "tcgen05.ld.32x32b.x" + num(n.columns));
    line("float " + n.dst + "[" + num(n.columns) + "];");
    line("gg::dev::tmem_load_32x32b_x" + num(n.columns) + "(gg::dev::tmem_address(" + n.base + ", " + to_c(n.lane) +
         ", " + to_c(n.column) + "), " + n.dst + ");");
    if (n.zero_when)
      line("if (" + to_c(n.zero_when) + ") for (int i = 0; i < " + num(n.columns) + "; ++i) " + n.dst +
           "[i] = 0.0f;  // no MMA wrote the accumulator");
  }

  // Split-K: the workspace holds a record per slot, its ticket then [splits][per_thread][threads] floats.
  void workspace_locals(const SplitKWorkspace& ws, const ExprPtr& slot, int first_thread) {
    line("float* const partials = static_cast<float*>(args.workspace) + (long long)(" + to_c(slot) + ") * " +
         num(ws.record_words()) + " + 1;");
    line("const int t = threadIdx.x - " + num(first_thread) + ";");
  }
  // Register i of block b of a split-K node's accumulator, and its float in a split's partials: the
  // wgmma fragment acc[b][i] from element 0, or a TMEM chunk's registers chunk[i] from element0.
  template <class Node>
  static std::string partial_reg(const Node& n) {
    return n.accumulator + (n.fragment == Fragment::TmemLanes ? "[i]" : "[b][i]");
  }
  template <class Node>
  static std::string partial_at(const Node& n) {
    const std::string reg = n.element0 ? "(" + to_c(n.element0) + ") + b * " + num(n.regs) + " + i" : "b * " + num(n.regs) + " + i";
    return "(" + reg + ") * " + num(n.ws.threads) + " + t";
  }
  void visit_PartialStore(const PartialStore& n) override {
    open("");
    line("// split-K: this split's partial sums of the tile, coalesced across the tile's threads");
    workspace_locals(n.ws, n.slot, n.first_thread);
    line("float* const mine = partials + (long long)(" + to_c(n.split) + ") * " + num(n.ws.tile_floats()) + ";");
    line("#pragma unroll");
    line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("  #pragma unroll");
    line("  for (int i = 0; i < " + num(n.regs) + "; ++i) gg::dev::store_partial(mine + " + partial_at(n) + ", " +
         partial_reg(n) + ");");
    line("__threadfence();  // visible device-wide before this CTA's ticket (or its count of them stored)");
    close();
  }
  static std::string counter_at(const ExprPtr& counter) {
    return "static_cast<unsigned*>(args.workspace) + " + to_c(counter);
  }
  void visit_TileTicket(const TileTicket& n) override {
    line("const bool " + n.result + " = " + (n.when ? "!" + to_c(n.when) + " || " : std::string()) + "gg::dev::" +
         (n.claim ? "tile_claim(" : "tile_ticket(") + counter_at(n.counter) + ", " + to_c(n.arrivals) + ", " +
         to_c(n.barrier) + ", " + num(n.threads) + ", threadIdx.x == " + num(n.first_thread) + ");");
  }
  void visit_PartialsStored(const PartialsStored& n) override {
    line("gg::dev::tile_partials_stored(" + counter_at(n.counter) + ", threadIdx.x == " + num(n.first_thread) + ");");
  }
  void visit_AwaitPartials(const AwaitPartials& n) override {
    line("gg::dev::tile_await_partials(" + counter_at(n.counter) + ", " + to_c(n.arrivals) + ", " + to_c(n.barrier) +
         ", " + num(n.threads) + ", threadIdx.x == " + num(n.first_thread) + ");");
  }
  // The band's last CTA: each element's partials, added in slot order, then warp order.
  void visit_ReductionCombine(const ReductionCombine& n) override {
    const bool rows = n.along == EpilogueReduction::Along::Rows;
    open("");
    line(std::string("// the last tile of this ") + (rows ? "row" : "column") + " band adds the band's partial sums, in " +
         "slot order: the same bits whichever tile finished last");
    line("const float* const partials = static_cast<const float*>(args.workspace);");
    line("#pragma unroll 1");
    open("for (int i = threadIdx.x - " + num(n.first_thread) + "; i < " + num(n.elements) + "; i += " + num(n.threads) + ")");
    line("const long long at = (long long)(" + to_c(n.element0) + ") + i;");
    line("if (at >= " + to_c(n.limit) + ") break;");
    line("float sum = 0.0f;");
    line("#pragma unroll 1");
    open("for (int t = 0; t < " + to_c(n.slots_in_band) + "; ++t)");
    line("const float* const slot = partials + (long long)(" + to_c(n.first_slot) + " + t * (" + to_c(n.slot_stride) +
         ")) * " + num(n.ws.record_words()) + " + " + num(2 + n.part0) + " + i;");
    if (n.parts == 1) {
      line("sum += gg::dev::load_partial(slot);");
    } else {
      line("#pragma unroll");
      line("for (int w = 0; w < " + num(n.parts) + "; ++w) sum += gg::dev::load_partial(slot + w * " +
           num(n.part_stride) + ");");
    }
    close();
    line(n.out + "[(long long)(" + to_c(n.out_offset) + ") + at] = sum;");
    close();
    close();
  }
  // Two splits, claimed first: this CTA's sums never left its registers; the other's are added in
  // split order, (0 + p0) + p1, the bits the reduction of both stored shares gives.
  void own_and_other(const PartialReduce& n) {
    open("");
    line("// split-K: the tile's last split adds the other split's partial sums to its own, in split order");
    workspace_locals(n.ws, n.slot, n.first_thread);
    line("const int own = " + to_c(n.own) + ";");
    line("const float* const theirs = partials + (1 - own) * " + num(n.ws.tile_floats()) + ";");
    const std::string mine = partial_reg(n);
    const std::string theirs = "gg::dev::load_partial(theirs + " + partial_at(n) + ")";
    const auto add = [&](const std::string& p0, const std::string& p1) {
      line("#pragma unroll");
      line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
      line("  #pragma unroll");
      line("  for (int i = 0; i < " + num(n.regs) + "; ++i) " + mine + " = (0.0f + " + p0 + ") + " + p1 + ";");
    };
    open("if (own == 0)");
    add(mine, theirs);
    close();
    open("else");
    add(theirs, mine);
    close();
    close();
  }
  void visit_PartialReduce(const PartialReduce& n) override {
    if (n.own) return own_and_other(n);
    open("");
    line("// split-K: the tile's last split adds every split's partial sums, in split order");
    workspace_locals(n.ws, n.slot, n.first_thread);
    line("#pragma unroll");
    line("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("  #pragma unroll");
    line("  for (int i = 0; i < " + num(n.regs) + "; ++i) " + partial_reg(n) + " = 0.0f;");
    // One pass over the tile per split, not unrolled: the splits' loads would otherwise be unrolled
    // splits x fragments times, which doubled the NVRTC time of a 128x256 tile's kernel.
    line("#pragma unroll 1");
    open("for (int s = 0; s < " + (n.pieces ? to_c(n.pieces) : num(n.ws.splits)) + "; ++s)");
    line("#pragma unroll");
    open("for (int b = 0; b < " + num(n.blocks) + "; ++b)");
    line("#pragma unroll");
    line("for (int i = 0; i < " + num(n.regs) + "; ++i)");
    line("  " + partial_reg(n) + " += gg::dev::load_partial(partials + s * " + num(n.ws.tile_floats()) + " + " +
         partial_at(n) + ");");
    close();
    close();
    close();
  }

  // Abstract nodes never reach the printer: check_sync rejects them first.
  void visit_LoadTile(const LoadTile&) override { GG_INTERNAL_CHECK(false, "LoadTile reached the printer"); }
  void visit_AcquireStage(const AcquireStage&) override { GG_INTERNAL_CHECK(false, "AcquireStage reached the printer"); }
  void visit_ComputeTile(const ComputeTile&) override { GG_INTERNAL_CHECK(false, "ComputeTile reached the printer"); }
  void visit_FinishCompute(const FinishCompute&) override { GG_INTERNAL_CHECK(false, "FinishCompute reached the printer"); }
  void visit_AcquireAccumulator(const AcquireAccumulator&) override {
    GG_INTERNAL_CHECK(false, "AcquireAccumulator reached the printer");
  }
  void visit_ReleaseStage(const ReleaseStage&) override { GG_INTERNAL_CHECK(false, "ReleaseStage reached the printer"); }
  void visit_WriteTile(const WriteTile&) override { GG_INTERNAL_CHECK(false, "WriteTile reached the printer"); }
};

}  // namespace

std::string print_cuda_kernel(const Kernel& k) {
  const KernelPlan& p = k.plan;
  CudaPrinter pr;
  pr.warpgroups = p.threads / kWarpgroupThreads;
  pr.os << "extern \"C\" __global__ void __launch_bounds__(" << p.threads << ", 1)\n"
        << k.name << "(const __grid_constant__ GgGemmArgs args) {\n";
  pr.line("extern __shared__ __align__(1024) unsigned char gg_smem_raw[];");
  pr.line("// 128B-swizzled tiles need a 1024-byte aligned base");
  pr.line("const unsigned smem_base = (gg::dev::smem_addr(gg_smem_raw) + 1023u) & ~1023u;");
  for (const auto& b : p.smem)
    pr.line("const unsigned " + b.name + " = smem_base + " + num(b.offset) + "u;  // " + num(b.bytes) + " bytes, " +
            b.purpose);
  pr.line("const int warpgroup = gg::dev::warpgroup_index_in_block();  // warp-uniform, for role branches");
  pr.line("(void)warpgroup;");
  if (kir::uses_tcgen05(k.body)) {
    pr.line("const int warp = gg::dev::warp_index_in_block();  // warp-uniform: its quarter of the TMEM lanes");
    pr.line("(void)warp;");
  }
  pr.visit(k.body);
  pr.os << "}\n";
  if (p.pointer_array)  // its launch runs this first: every group's tensor maps (runtime/device/group_maps.cuh)
    pr.os << "\nextern \"C\" __global__ void __launch_bounds__(128)\n"
          << k.name << "_group_maps(const __grid_constant__ GgGroupMapArgs args) { gg::dev::build_group_maps(args); }\n";
  if (p.staged_a || p.staged_b)  // its launch runs this first: the aligned copies (runtime/device/stage_rows.cuh)
    pr.os << "\nextern \"C\" __global__ void __launch_bounds__(GG_STAGE_THREADS)\n"
          << k.name << "_stage(const __grid_constant__ GgStageArgs args) { gg::dev::stage_rows(args); }\n";
  return pr.os.str();
}

}  // namespace gg
