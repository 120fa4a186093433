#include "codegen/insert_mbarriers.h"

namespace gg {

namespace {

using namespace kir;

constexpr int kOperandLoadsPerStage = 2;  // A and B each arrive once with their bytes

class LowerStageSync : public Mutator {
 public:
  explicit LowerStageSync(const KernelPlan& p) : p_(p) {}

  StmtPtr mutate_AcquireStage(const std::shared_ptr<const AcquireStage>& a) override {
    if (p_.tma_load) {
      auto wait = std::make_shared<MbarrierWait>();
      wait->bar = {"full_bar", a->stage};
      wait->parity = a->parity;
      return wait;
    }
    return block({std::make_shared<FenceProxyAsync>(), std::make_shared<SyncThreads>()});
  }

  StmtPtr mutate_ReleaseStage(const std::shared_ptr<const ReleaseStage>&) override {
    return std::make_shared<SyncThreads>();
  }

 private:
  const KernelPlan& p_;
};

}  // namespace

Kernel insert_mbarriers(Kernel k) {
  k.body = LowerStageSync(k.plan).mutate(k.body);
  if (!k.plan.tma_load) return k;
  std::vector<StmtPtr> init;
  for (int s = 0; s < k.plan.stages; ++s) {
    auto i = std::make_shared<MbarrierInit>();
    i->bar = {"full_bar", imm(s)};
    i->arrivals = kOperandLoadsPerStage;
    init.push_back(i);
  }
  init.push_back(std::make_shared<FenceMbarrierInit>());
  k.body = block({comment("mbarriers: one 'full' barrier per stage"),
                  elect_one(block(init)), std::make_shared<SyncThreads>(), k.body});
  return k;
}

}  // namespace gg
