#include "codegen/check_sync.h"

#include <set>

#include "dsl/error.h"

namespace gg {

namespace {

using namespace kir;

class SyncChecker : public Visitor {
 public:
  std::set<std::string> expected_bars;  // barriers with an expect-tx issued, in program order
  bool in_wgmma_group = false, wgmma_committed = false, proxy_fenced = false, staged_pending = false;
  bool wgmma_may_run = false;  // a wait left groups in flight

  void abstract(NodeKind k) { GG_INTERNAL_CHECK(false, std::string("abstract node left after lowering: ") + node_kind_name(k)); }
  void visit_LoadTile(const LoadTile& n) override { abstract(n.kind); }
  void visit_AcquireStage(const AcquireStage& n) override { abstract(n.kind); }
  void visit_ComputeTile(const ComputeTile& n) override { abstract(n.kind); }
  void visit_FinishCompute(const FinishCompute& n) override { abstract(n.kind); }
  void visit_ReleaseStage(const ReleaseStage& n) override { abstract(n.kind); }
  void visit_WriteTile(const WriteTile& n) override { abstract(n.kind); }

  void visit_MbarrierArriveExpectTx(const MbarrierArriveExpectTx& n) override {
    expected_bars.insert(n.bar.array + "[" + to_c(n.bar.index) + "]");
  }
  void visit_TmaLoad(const TmaLoad& n) override {
    std::string key = n.bar.array + "[" + to_c(n.bar.index) + "]";
    GG_INTERNAL_CHECK(expected_bars.count(key), "TMA load completes on " + key + " without an expect-tx before it");
  }
  void visit_WgmmaFence(const WgmmaFence&) override {
    in_wgmma_group = true;
    wgmma_committed = false;
  }
  void visit_WgmmaIssue(const WgmmaIssue&) override {
    GG_INTERNAL_CHECK(in_wgmma_group, "wgmma issued without a wgmma fence before it");
  }
  void visit_WgmmaCommit(const WgmmaCommit&) override {
    GG_INTERNAL_CHECK(in_wgmma_group, "wgmma commit without a group");
    wgmma_committed = true;
  }
  void visit_WgmmaWait(const WgmmaWait& n) override {
    GG_INTERNAL_CHECK(wgmma_committed, "wgmma wait without a committed group");
    in_wgmma_group = false;
    wgmma_may_run = n.pending > 0;
  }
  void visit_EpilogueStore(const EpilogueStore& n) override {
    GG_INTERNAL_CHECK(!in_wgmma_group && !wgmma_may_run, "epilogue reads the accumulator before every wgmma completed");
    staged_pending = n.staged;
    proxy_fenced = false;
  }
  void visit_FenceProxyAsync(const FenceProxyAsync&) override { proxy_fenced = true; }
  void visit_TmaStore(const TmaStore&) override {
    GG_INTERNAL_CHECK(!staged_pending || proxy_fenced, "TMA store of staged data without fence.proxy.async");
  }
};

}  // namespace

Kernel check_sync(Kernel k) {
  SyncChecker checker;
  checker.visit(k.body);
  return k;
}

}  // namespace gg
