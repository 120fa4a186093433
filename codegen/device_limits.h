#pragma once
// Per-device limits every schedule is checked against (DESIGN.md rule 5).
#include <cstdint>
#include <string>
#include <vector>

#include "dsl/schedule.h"

namespace gg {

struct DeviceLimits {
  std::string name = "H100 (sm_90a)";
  int64_t smem_bytes = 232448;  // 227 KB of dynamic shared memory per CTA
  int64_t smem_per_sm = 233472; // 228 KB per SM, shared by its resident CTAs
  int64_t smem_reserved_per_cta = 1024;  // the driver's per-CTA reservation
  int max_threads_per_sm = 2048;
  int sms = 132;
  int registers = 65536;        // 32-bit registers per SM (and per CTA)
  int max_regs_per_thread = 255;
  int max_cluster = 8;          // portable cluster size
  // The clusters of each size (index: CTAs per cluster, 1 CTA per SM) the device holds at once, as
  // cudaOccupancyMaxActiveClusters reported on the part these limits were measured on (`sms`
  // SMs); a cluster lives inside one GPC, whose SM counts differ, so 132 SMs hold 30 clusters of
  // 4, not 33. Empty, or another SM count (`--sms`): every SM in whole clusters.
  std::vector<int> resident_clusters_measured;
  int resident_clusters_sms = 0;
  // The clusters of `cluster_ctas` a persistent grid can keep resident with `ctas_per_sm` CTAs on
  // each SM.
  int64_t resident_clusters(int64_t cluster_ctas, int64_t ctas_per_sm = 1) const;
  int max_box_elements = 256;   // per TMA box dimension
  int named_barriers = 16;
  int tmem_columns = 512;       // sm_100a only
  Target target = Target::Sm90a;  // the architecture kernels for this device are lowered for
};

DeviceLimits hopper();
DeviceLimits blackwell();
DeviceLimits limits_for(Target t);

}  // namespace gg
