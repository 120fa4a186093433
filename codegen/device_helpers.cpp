#include "codegen/device_helpers.h"

#include <set>

namespace gg {

namespace {

using namespace kir;

// Every header an emitted kernel may embed, in embedding order (gemm_args.h first: the kernel's
// parameter type).
constexpr const char* kDeviceHeaders[] = {"gemm_args.h",    "smem.cuh",      "fence.cuh",     "mbarrier.cuh",
                                          "tma.cuh",        "group_maps.cuh", "warp.cuh",      "cluster.cuh",   "named_barrier.cuh",
                                          "split_k.cuh",    "setmaxnreg.cuh", "smem_desc.h",  "wgmma.cuh",
                                          "wgmma_mma.cuh",  "tcgen05_desc.h", "tcgen05.cuh",  "epilogue.cuh",
                                          "stmatrix.cuh",   "global_copy.cuh", "tile_order.h",  "stage_rows.cuh"};

// Each handler names the headers whose helpers cuda_printer.cpp prints for that node.
class CollectHelpers : public Visitor {
 public:
  std::set<std::string> headers;
  std::set<std::string> wrappers;

  void visit_ElectOne(const ElectOne& e) override {
    headers.insert("warp.cuh");
    Visitor::visit_ElectOne(e);
  }
  // A let's value may call a helper (the Hilbert tile order's hilbert_tile_m / hilbert_tile_n).
  void visit_Let(const Let& l) override {
    std::set<std::string> called;
    called_helpers(l.value, called);
    for (const std::string& f : called) headers.insert(helper_header(f));
  }
  void visit_Assign(const Assign& a) override {
    std::set<std::string> called;
    called_helpers(a.value, called);
    for (const std::string& f : called) headers.insert(helper_header(f));
  }
  void visit_SetMaxNReg(const SetMaxNReg&) override { headers.insert("setmaxnreg.cuh"); }
  void visit_ClusterSync(const ClusterSync&) override { headers.insert("cluster.cuh"); }
  void visit_MbarrierInit(const MbarrierInit&) override { headers.insert("mbarrier.cuh"); }
  void visit_FenceMbarrierInit(const FenceMbarrierInit&) override { headers.insert("mbarrier.cuh"); }
  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx&) override { headers.insert("mbarrier.cuh"); }
  void visit_MbarrierArrive(const MbarrierArrive&) override { headers.insert("mbarrier.cuh"); }
  void visit_MbarrierWait(const MbarrierWait&) override { headers.insert("mbarrier.cuh"); }
  void visit_TmaLoad(const TmaLoad& n) override {
    headers.insert("tma.cuh");
    if (n.group) headers.insert("group_maps.cuh");
  }
  void visit_TmaStore(const TmaStore& n) override {
    headers.insert("tma.cuh");
    if (n.group) headers.insert("group_maps.cuh");
  }
  void visit_AcquireGroupMaps(const AcquireGroupMaps&) override { headers.insert("group_maps.cuh"); }
  void visit_BulkCommit(const BulkCommit&) override { headers.insert("tma.cuh"); }
  void visit_BulkWaitRead(const BulkWaitRead&) override { headers.insert("tma.cuh"); }
  void visit_SyncCopyTile(const SyncCopyTile& n) override {
    headers.insert({"smem.cuh", "smem_desc.h"});  // the swizzled 16-byte shared stores
    if (n.load_bytes != 16) headers.insert("global_copy.cuh");  // rows not 16-byte aligned
  }
  void visit_FenceProxyAsync(const FenceProxyAsync&) override { headers.insert("fence.cuh"); }
  void visit_NamedBarrierSync(const NamedBarrierSync&) override { headers.insert("named_barrier.cuh"); }
  void visit_NamedBarrierArrive(const NamedBarrierArrive&) override { headers.insert("named_barrier.cuh"); }
  // The fences and waits also fence the accumulator registers (wgmma_fence_operand).
  void visit_WgmmaFence(const WgmmaFence&) override { headers.insert("wgmma.cuh"); }
  void visit_WgmmaCommit(const WgmmaCommit&) override { headers.insert("wgmma.cuh"); }
  void visit_WgmmaWait(const WgmmaWait&) override { headers.insert("wgmma.cuh"); }
  void visit_LoadScaleFactors(const LoadScaleFactors&) override { headers.insert("smem.cuh"); }  // ld_shared_u32
  void visit_WgmmaIssue(const WgmmaIssue& n) override {
    headers.insert({"smem_desc.h", "wgmma_mma.cuh"});  // make_smem_desc, the wrapper
    wrappers.insert(wgmma_wrapper_name(n));
  }
  // sm_100a: tcgen05.cuh's instructions; tcgen05_desc.h's descriptors and TMEM addresses.
  void visit_TmemAlloc(const TmemAlloc&) override { headers.insert("tcgen05.cuh"); }
  void visit_TmemBaseLoad(const TmemBaseLoad&) override { headers.insert("smem.cuh"); }  // ld_shared_u32
  void visit_TmemDealloc(const TmemDealloc&) override { headers.insert("tcgen05.cuh"); }
  void visit_Tcgen05Fence(const Tcgen05Fence&) override { headers.insert("tcgen05.cuh"); }
  void visit_Tcgen05Mma(const Tcgen05Mma&) override {
    headers.insert({"smem_desc.h", "tcgen05_desc.h", "tcgen05.cuh"});  // smem_desc_add moves descriptors
  }
  void visit_Tcgen05Commit(const Tcgen05Commit&) override { headers.insert("tcgen05.cuh"); }
  void visit_Tcgen05Copy(const Tcgen05Copy&) override { headers.insert({"tcgen05_desc.h", "tcgen05.cuh"}); }
  void visit_TmemLoad(const TmemLoad&) override { headers.insert({"tcgen05_desc.h", "tcgen05.cuh"}); }
  void visit_EpilogueStore(const EpilogueStore& n) override {
    using K = EpilogueOp::Kind;
    if (n.fragment == Fragment::TmemLanes) headers.insert("tcgen05_desc.h");  // tmem_lane_row
    // epilogue.cuh: stores to global memory, 16-bit packing (and staged C's unpacking), C and
    // bias loads, activations. A staged f32 store with only a scale and staged C calls none of them.
    bool loads_or_activates = false;  // C staged at f32 is read back as raw words (smem.cuh)
    for (const auto& op : n.ops)
      loads_or_activates = loads_or_activates || (op.kind != K::Scale && !(op.kind == K::AddScaled && n.c_staged));
    const bool f32_out = n.out_type == "f32";
    if (!n.staged || !f32_out || loads_or_activates) headers.insert("epilogue.cuh");
    if (n.staged) headers.insert({"smem.cuh", "smem_desc.h"});  // swizzled staging stores
    if (n.stmatrix) headers.insert("stmatrix.cuh");
    if (n.reduce) headers.insert("split_k.cuh");  // store_partial
  }
  void visit_PartialStore(const PartialStore&) override { headers.insert("split_k.cuh"); }
  void visit_TileTicket(const TileTicket&) override { headers.insert("split_k.cuh"); }
  void visit_PartialsStored(const PartialsStored&) override { headers.insert("split_k.cuh"); }
  void visit_AwaitPartials(const AwaitPartials&) override { headers.insert("split_k.cuh"); }
  void visit_PartialReduce(const PartialReduce&) override { headers.insert("split_k.cuh"); }
  void visit_ReductionCombine(const ReductionCombine&) override { headers.insert("split_k.cuh"); }
};

}  // namespace

DeviceHelpers device_helpers_used(const Kernel& k) {
  CollectHelpers c;
  // print_cuda_kernel's prologue: the GgGemmArgs parameter, smem_addr, warpgroup_index_in_block.
  c.headers.insert({"gemm_args.h", "smem.cuh", "warp.cuh"});
  c.visit(k.body);
  if (k.plan.staged_a || k.plan.staged_b) c.headers.insert("stage_rows.cuh");  // the `_stage` copy kernel
  DeviceHelpers out;
  for (const char* h : kDeviceHeaders)
    if (c.headers.count(h)) out.headers.emplace_back(h);
  out.wgmma_wrappers.assign(c.wrappers.begin(), c.wrappers.end());
  return out;
}

}  // namespace gg
