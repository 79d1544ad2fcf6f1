// The read path's counters as `strata stats` shows them (the "read_path"
// object of the control socket's stats reply).
#include "fs/fs_context.h"

namespace strata::fs {

nlohmann::ordered_json ReadPathJson(const WorkspaceCounters::ReadPath& r) {
  const StoreReadCounters& s = r.store;
  nlohmann::ordered_json backend = nlohmann::ordered_json::object();
  for (const auto& [name, value] : s.backend) backend[name] = value;
  return {{"demands", r.demands},
          {"fetches", r.fetches},
          {"fetch_errors", r.fetch_errors},
          {"fetches_in_flight_max", r.fetches_in_flight_max},
          {"readahead_issued", r.readahead_issued},
          {"readahead_used", r.readahead_used},
          {"readahead_wasted", r.readahead_wasted},
          {"readahead_skipped", r.readahead_skipped},
          {"cache_bytes", r.cache_bytes},
          {"cache_capacity", r.cache_capacity},
          {"store",
           {{"objects", s.objects},
            {"bytes_stored", s.bytes_stored},
            {"bytes_verified", s.bytes_verified},
            {"lookup_us", s.lookup_us},
            {"pread_us", s.pread_us},
            {"decode_us", s.decode_us},
            {"max_in_flight", s.max_in_flight},
            {"backend", backend}}}};
}

}  // namespace strata::fs
