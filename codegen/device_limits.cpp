#include "codegen/device_limits.h"

#include <algorithm>

namespace gg {

int64_t DeviceLimits::resident_clusters(int64_t cluster_ctas, int64_t ctas_per_sm) const {
  cluster_ctas = std::max<int64_t>(1, cluster_ctas);
  ctas_per_sm = std::max<int64_t>(1, ctas_per_sm);
  const int64_t whole = int64_t(sms) * ctas_per_sm / cluster_ctas;
  if (sms != resident_clusters_sms || cluster_ctas >= int64_t(resident_clusters_measured.size())) return whole;
  const int measured = resident_clusters_measured[size_t(cluster_ctas)];
  return measured > 0 ? std::min(whole, int64_t(measured) * ctas_per_sm) : whole;
}

DeviceLimits hopper() {
  DeviceLimits d;
  // An H200's, measured by benchmarks/resident_clusters.cu (2026-11-28); sizes without an entry
  // (0) were not measured.
  d.resident_clusters_measured = {0, 132, 66, 39, 30, 22, 17, 0, 15, 0, 7, 0, 7, 0, 0, 0, 7};
  d.resident_clusters_sms = 132;
  return d;
}

DeviceLimits blackwell() {
  DeviceLimits d;
  d.name = "B200 (sm_100a)";
  d.sms = 148;
  d.target = Target::Sm100a;
  return d;
}

DeviceLimits limits_for(Target t) { return t == Target::Sm100a ? blackwell() : hopper(); }

}  // namespace gg
