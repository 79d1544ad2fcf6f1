// A mount's counters in the Prometheus text exposition format (version
// 0.0.4), as GET /metrics serves them (metrics/http_endpoint.h). The names and
// what each one counts are listed in docs/metrics.md; they follow Prometheus'
// conventions: base units (seconds, bytes), counters end in _total, one
// histogram per FUSE operation with fixed power-of-two buckets.
// Thread-safety: a pure function of its argument.
#pragma once

#include <string>

#include "fs/fuse_server.h"
#include "metrics/commit_tally.h"
#include "workspace/workspace.h"

namespace strata::metrics {

struct MetricsSnapshot {
  std::string workspace;  // its name, in strata_workspace_info
  bool read_only = false;
  ServedCounters served;
  WorkspaceCounters counters;
  CommitTotals commits;
};

std::string RenderExposition(const MetricsSnapshot& snapshot);

}  // namespace strata::metrics
