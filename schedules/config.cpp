#include "schedules/config.h"

#include <algorithm>

namespace gg {

int pipeline_stages(int64_t k_trips, int desired) {
  return static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(desired, k_trips)));
}

}  // namespace gg
