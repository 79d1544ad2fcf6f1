#include "metrics/exposition.h"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string_view>
#include <utility>

namespace strata::metrics {

namespace {

// A label value as the format wants it: backslash, quote and newline escaped.
std::string Escaped(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Writes families: the HELP and TYPE lines once, then the samples.
class Writer {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(std::string_view name, std::string_view labels, uint64_t value) {
    fmt::format_to(std::back_inserter(out_), "{}{}{} {}\n", name, labels.empty() ? "" : "{", Braced(labels), value);
  }
  void Sample(std::string_view name, std::string_view labels, double value) {
    fmt::format_to(std::back_inserter(out_), "{}{}{} {}\n", name, labels.empty() ? "" : "{", Braced(labels), value);
  }
  // A counter family of one sample per value of the label `key`.
  template <typename T>
  void Counters(std::string_view name, std::string_view help, std::string_view key,
                std::initializer_list<std::pair<const char*, T>> values) {
    Family(name, "counter", help);
    for (const auto& [label, value] : values) Sample(name, fmt::format("{}=\"{}\"", key, label), value);
  }
  // Families of one sample each, without labels.
  struct Plain {
    std::string_view name, type, help;
    uint64_t value;
  };
  void All(std::initializer_list<Plain> metrics) {
    for (const Plain& m : metrics) One(m.name, m.type, m.help, m.value);
  }
  // A family of one sample without labels.
  template <typename T>
  void One(std::string_view name, std::string_view type, std::string_view help, T value) {
    Family(name, type, help);
    Sample(name, "", value);
  }
  std::string Take() { return std::move(out_); }

 private:
  static std::string Braced(std::string_view labels) { return labels.empty() ? "" : std::string(labels) + "}"; }
  std::string out_;
};

std::string OpLabel(const std::string& op) { return "op=\"" + Escaped(op) + "\""; }

void WriteFuse(Writer& w, const ServedCounters& served) {
  w.Family("strata_fuse_transport_info", "gauge", "How the kernel's FUSE requests reach the daemon (always 1).");
  w.Sample("strata_fuse_transport_info", "transport=\"" + Escaped(served.transport) + "\"", uint64_t{1});
  w.Family("strata_fuse_requests_total", "counter", "FUSE requests answered, per operation.");
  for (const auto& op : served.operations) w.Sample("strata_fuse_requests_total", OpLabel(op.name), op.count);
  w.Family("strata_fuse_request_errors_total", "counter", "FUSE requests answered with an error, per operation.");
  for (const auto& op : served.operations) w.Sample("strata_fuse_request_errors_total", OpLabel(op.name), op.errors);
  // The daemon counts latencies in power-of-two buckets of microseconds
  // (fs/op_stats.h): bucket b holds those below 2^b us, and its last bucket
  // everything slower, which only +Inf can bound.
  w.Family("strata_fuse_request_duration_seconds", "histogram",
           "Time from a FUSE request's arrival to its answer, per operation.");
  for (const auto& op : served.operations) {
    uint64_t cumulative = 0;
    size_t next = 0;
    for (int b = 0; b + 1 < ServedCounters::kLatencyBuckets; b++) {
      const uint64_t bound_us = uint64_t{1} << b;
      while (next < op.latency_us.size() && op.latency_us[next].first <= bound_us)
        cumulative += op.latency_us[next++].second;
      w.Sample("strata_fuse_request_duration_seconds_bucket",
               OpLabel(op.name) + fmt::format(",le=\"{}\"", static_cast<double>(bound_us) / 1e6), cumulative);
    }
    w.Sample("strata_fuse_request_duration_seconds_bucket", OpLabel(op.name) + ",le=\"+Inf\"", op.count);
    w.Sample("strata_fuse_request_duration_seconds_sum", OpLabel(op.name),
             static_cast<double>(op.latency_ns_total) / 1e9);
    w.Sample("strata_fuse_request_duration_seconds_count", OpLabel(op.name), op.count);
  }
  w.Counters<uint64_t>("strata_fuse_dispatch_total",
                       "FUSE requests by the thread that answered them: the dispatcher itself, or a worker.", "thread",
                       {{"dispatcher", served.inline_requests}, {"worker", served.worker_requests}});
  w.All({
      {"strata_fuse_polled_requests_total", "counter",
       "FUSE requests the dispatcher found while polling after an answer, without sleeping.", served.caught_polling},
      {"strata_fuse_dispatcher_sleeps_total", "counter", "Times the dispatcher slept waiting for a request.",
       served.sleeps},
  });
}

void WriteWorkspace(Writer& w, const WorkspaceCounters& c) {
  w.All({
      {"strata_workspace_changed_paths", "gauge", "Paths that differ from the workspace's base now.", c.changed_paths},
      {"strata_workspace_written_bytes_total", "counter", "File bytes written into the workspace.", c.bytes_written},
      {"strata_workspace_read_bytes_total", "counter", "File bytes read from the workspace, changed and base data.",
       c.bytes_read},
      {"strata_workspace_directories_loaded_total", "counter", "Base directories read from the store on first use.",
       c.directories_loaded},
      {"strata_workspace_db_batches_total", "counter", "Group commits of the workspace's own database.",
       c.batches_committed},
      {"strata_workspace_db_operations_total", "counter", "Operations those group commits held.",
       c.operations_committed},
      {"strata_workspace_syncs_total", "counter", "fsync and fsyncdir calls served.", c.syncs},
      {"strata_workspace_files_to_delete", "gauge", "Removed files whose space is not given back yet.",
       c.data_files_to_delete},
  });
  w.One("strata_workspace_db_commit_seconds_total", "counter", "Time spent in those group commits.",
        static_cast<double>(c.commit_us_total) / 1e6);
  w.Counters<uint64_t>("strata_chunk_cache_requests_total",
                       "Chunk cache lookups of base file data, by result (a wait: on a fetch already in flight).",
                       "result",
                       {{"hit", c.chunk_cache_hits}, {"miss", c.chunk_cache_misses}, {"wait", c.chunk_cache_waits}});
  const WorkspaceCounters::ReadPath& r = c.read_path;
  w.All({
      {"strata_chunk_cache_bytes", "gauge", "Decoded chunks held by the chunk cache.", r.cache_bytes},
      {"strata_chunk_cache_capacity_bytes", "gauge", "The chunk cache's bound.", r.cache_capacity},
      {"strata_chunk_demands_total", "counter", "Chunks reads asked the cache for.", r.demands},
      {"strata_chunk_fetches_total", "counter", "Chunks loaded from the store (misses and read-ahead).", r.fetches},
      {"strata_chunk_fetch_errors_total", "counter", "Chunk loads that failed.", r.fetch_errors},
      {"strata_chunk_fetches_in_flight_max", "gauge", "The most chunk loads seen in flight at once.",
       r.fetches_in_flight_max},
  });
  w.Counters<uint64_t>(
      "strata_readahead_chunks_total",
      "Read-ahead of base chunks: issued, used by a later read, wasted (evicted or failed unread), skipped "
      "at a bound.",
      "outcome",
      {{"issued", r.readahead_issued},
       {"used", r.readahead_used},
       {"wasted", r.readahead_wasted},
       {"skipped", r.readahead_skipped}});
}

void WriteStoreReads(Writer& w, const StoreReadCounters& s) {
  w.All({
      {"strata_store_read_objects_total", "counter", "Objects read from the store's packs.", s.objects},
      {"strata_store_read_bytes_total", "counter", "Bytes read from the store's packs, as stored (compressed).",
       s.bytes_stored},
      {"strata_store_verified_bytes_total", "counter", "Decoded bytes checked, by either check.", s.bytes_verified},
      {"strata_store_frames_decoded_total", "counter", "Frames of framed objects decoded.", s.frames_decoded},
      {"strata_store_range_reads_total", "counter", "Reads that decoded only some frames of an object.", s.range_reads},
      {"strata_store_reads_in_flight_max", "gauge", "The most object reads seen running at once.", s.max_in_flight},
  });
  w.Counters<uint64_t>("strata_store_checked_bytes_total",
                       "Bytes checked, by check: xxh3 (stored frames) or sha256 (decoded objects against their ids).",
                       "check", {{"xxh3", s.fast_checked_bytes}, {"sha256", s.sha256_checked_bytes}});
  w.Counters<double>("strata_store_read_seconds_total",
                     "Time reading objects, by step: index lookup, pread of packs, decode (decompress and check).",
                     "step",
                     {{"index", static_cast<double>(s.lookup_us) / 1e6},
                      {"pread", static_cast<double>(s.pread_us) / 1e6},
                      {"decode", static_cast<double>(s.decode_us) / 1e6}});
  // A remote store's block cache reports counters and sizes under names of
  // its own (remote/block_cache.h); a local store has none.
  if (!s.backend.empty()) {
    w.Family("strata_store_backend_value", "gauge",
             "What the store's backend reports (a remote's block cache: fetches, hits, waits, bytes), by name.");
    for (const auto& [name, value] : s.backend)
      w.Sample("strata_store_backend_value", "name=\"" + Escaped(name) + "\"", value);
  }
}

void WriteCommits(Writer& w, const CommitTotals& c) {
  w.Counters<uint64_t>("strata_commits_total",
                       "Commits asked of this mount, by result: committed, empty (nothing to commit) or failed.",
                       "result", {{"committed", c.commits}, {"empty", c.empty}, {"failed", c.failed}});
  w.Counters<double>("strata_commit_phase_seconds_total",
                     "Time commits spent in each phase: cut, capture (chunk and hash changed files), trees, publish, "
                     "rebase.",
                     "phase",
                     {{"cut", c.cut_seconds},
                      {"capture", c.capture_seconds},
                      {"trees", c.trees_seconds},
                      {"publish", c.publish_seconds},
                      {"rebase", c.rebase_seconds}});
  w.All({
      {"strata_commit_changed_inodes_total", "counter", "Changed inodes the commits' cuts held.", c.changed_inodes},
      {"strata_commit_files_captured_total", "counter", "Files whose chunk lists commits recomputed.",
       c.files_captured},
      {"strata_commit_directories_written_total", "counter", "Trees commits built (the others reused by id).",
       c.directories_written},
      {"strata_commit_hashed_bytes_total", "counter", "File bytes commits chunked and hashed.", c.bytes_hashed},
      {"strata_commit_objects_written_total", "counter", "Objects commits added to the store.", c.objects_written},
  });
}

}  // namespace

std::string RenderExposition(const MetricsSnapshot& snapshot) {
  Writer w;
  w.Family("strata_workspace_info", "gauge", "The workspace this mount serves (always 1).");
  w.Sample(
      "strata_workspace_info",
      "workspace=\"" + Escaped(snapshot.workspace) + "\",read_only=\"" + (snapshot.read_only ? "true" : "false") + "\"",
      uint64_t{1});
  WriteFuse(w, snapshot.served);
  WriteWorkspace(w, snapshot.counters);
  WriteStoreReads(w, snapshot.counters.read_path.store);
  WriteCommits(w, snapshot.commits);
  return w.Take();
}

}  // namespace strata::metrics
