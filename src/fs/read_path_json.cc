// The stats reply of the control socket, and in it the read path's counters
// as `strata stats` shows them (the "read_path" object).
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
            {"frames_decoded", s.frames_decoded},
            {"range_reads", s.range_reads},
            {"fast_checked_bytes", s.fast_checked_bytes},
            {"sha256_checked_bytes", s.sha256_checked_bytes},
            {"max_in_flight", s.max_in_flight},
            {"backend", backend}}}};
}

nlohmann::ordered_json StatsReplyJson(const OpStats& ops, const WorkspaceCounters& c) {
  nlohmann::ordered_json ws = {
      {"changed_paths", c.changed_paths},
      {"batches_committed", c.batches_committed},
      {"operations_committed", c.operations_committed},
      {"commit_us_total", c.commit_us_total},
      {"commit_us_max", c.commit_us_max},
      {"syncs", c.syncs},
      {"bytes_written", c.bytes_written},
      {"bytes_read", c.bytes_read},
      {"directories_loaded", c.directories_loaded},
      {"data_files_to_delete", c.data_files_to_delete},
      {"chunk_cache", {{"hits", c.chunk_cache_hits}, {"misses", c.chunk_cache_misses}, {"waits", c.chunk_cache_waits}}},
      {"read_path", ReadPathJson(c.read_path)}};
  return {{"operations", nlohmann::ordered_json::parse(ops.ToJson())}, {"workspace", std::move(ws)}};
}

}  // namespace strata::fs
