#include "schedules/config.h"

#include <algorithm>

#include "codegen/resources.h"

namespace gg {

int pipeline_stages(int64_t k_trips, int desired) {
  return static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(desired, k_trips)));
}

int deepest_pipeline(const Schedule& s, const std::string& axis, int desired) {
  const auto mma = s.mma_shape();
  const DeviceLimits limits = limits_for(mma ? mma->target : Target::Sm90a);
  for (int stages = pipeline_stages(s.domain().axis(axis).extent, desired); stages > 2; --stages) {
    Schedule deeper = s;
    deeper.circular_buffer(axis, stages);
    if (summarize_resources(deeper, limits).smem_bytes <= limits.smem_bytes) return stages;
  }
  return 2;
}

CopyMethod copy_method_for(const Definition& def, const std::string& tensor) {
  const auto& ops = def.matmul_node().operands;
  const bool operand = tensor == def.node(ops[0]).name || tensor == def.node(ops[1]).name;
  // One pipeline feeds both operands: TMA for one only when the other can take it too.
  const bool both = !operand || (tma_can_copy(def, def.node(ops[0]).name) && tma_can_copy(def, def.node(ops[1]).name));
  return tma_can_copy(def, tensor) && both ? CopyMethod::Tma : CopyMethod::Auto;
}

void cache_read_operands(Schedule& s) {
  const Definition& def = s.definition();
  const auto& ops = def.matmul_node().operands;
  s.cache_read(def.node(ops[0]).name, copy_method_for(def, def.node(ops[0]).name));
  if (ops[1] != ops[0]) s.cache_read(def.node(ops[1]).name, copy_method_for(def, def.node(ops[1]).name));
}

const std::string& second_operand(const Definition& def) { return def.node(def.matmul_node().operands[1]).name; }

}  // namespace gg
