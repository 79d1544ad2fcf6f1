#include "util/time_ns.h"

namespace strata {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return JoinNs(ts.tv_sec, ts.tv_nsec);
}

}  // namespace strata
