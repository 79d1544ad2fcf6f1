// `strata stats MOUNTPOINT`: the counters of the daemon serving a mount, as
// its control socket reports them (control/protocol.h), for people or --json.
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli.h"
#include "control/socket.h"
#include "daemon/mount_record.h"
#include "util/progress.h"
#include "workspace/workspace.h"

namespace strata::cli {

Result<nlohmann::ordered_json> DaemonCounters(const Store& store, const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(auto j, control::ControlRequest(Workspace::StateDir(store, name) + "/control.sock",
                                                          control::DaemonRequest{}));
  if (!j.contains("operations") || !j.contains("workspace"))
    return Status::Corruption("the daemon's counters are not what this strata reads");
  return j;
}

namespace {

// The bucket holding the median of a latency histogram {"<N": count, ...}.
std::string MedianBucket(const nlohmann::ordered_json& op) {
  uint64_t count = op["count"].get<uint64_t>(), seen = 0;
  for (auto& [bucket, n] : op["latency_us"].items()) {
    seen += n.get<uint64_t>();
    if (seen * 2 >= count) return bucket + " us";
  }
  return "?";
}

// The read path of base data: chunk demands and loads, read-ahead, the store's reads.
void PrintReadPath(const nlohmann::ordered_json& r) {
  auto n = [&](const char* key) { return r[key].get<uint64_t>(); };
  const auto& s = r["store"];
  auto ms = [&](const char* key) { return s[key].get<double>() / 1000; };
  fmt::print("read path   {} chunk demands, {} fetches ({} errors, at most {} at once); cache {} of {}\n",
             n("demands"), n("fetches"), n("fetch_errors"), n("fetches_in_flight_max"), HumanBytes(n("cache_bytes")),
             HumanBytes(n("cache_capacity")));
  fmt::print("read-ahead  {} issued, {} used, {} wasted, {} skipped at a bound\n", n("readahead_issued"),
             n("readahead_used"), n("readahead_wasted"), n("readahead_skipped"));
  fmt::print("store reads {} objects, {} read, {} verified; {:.1f} ms index, {:.1f} ms pread, {:.1f} ms decode; "
             "at most {} at once\n",
             s["objects"].get<uint64_t>(), HumanBytes(s["bytes_stored"].get<uint64_t>()),
             HumanBytes(s["bytes_verified"].get<uint64_t>()), ms("lookup_us"), ms("pread_us"), ms("decode_us"),
             s["max_in_flight"].get<uint64_t>());
  if (s.contains("frames_decoded")) {  // absent from an older daemon
    const uint64_t frames = s["frames_decoded"].get<uint64_t>(), reads = s["objects"].get<uint64_t>();
    fmt::print("checks      {} frames decoded ({:.1f} per object read, {} reads of some frames only); {} checked by "
               "XXH3, {} by SHA-256\n",
               frames, reads ? static_cast<double>(frames) / reads : 0.0, s["range_reads"].get<uint64_t>(),
               HumanBytes(s["fast_checked_bytes"].get<uint64_t>()),
               HumanBytes(s["sha256_checked_bytes"].get<uint64_t>()));
  }
  if (s.contains("backend") && s["backend"].contains("cache_misses")) {
    const auto& b = s["backend"];
    auto v = [&](const char* key) { return b[key].get<uint64_t>(); };
    fmt::print("remote      {} blocks fetched ({}), {} from the cache, {} waits on a fetch; cache {} ({} evicted)\n",
               v("cache_misses"), HumanBytes(v("fetched_bytes")), v("cache_hits"), v("cache_waits"),
               HumanBytes(v("cached_bytes")), v("cache_evictions"));
  }
}

}  // namespace

int RunMountStats(Globals& g, const std::string& mp_arg) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::canonical(mp_arg, ec).string();
  if (ec) return Fail(Status::NotFound(mp_arg + " does not exist"));
  auto store = OpenStoreFor(g, mountpoint);
  if (!store.ok()) return Fail(store.status());
  auto found = daemon::FindMountAt(**store, mountpoint);
  if (!found) return Fail(Status::NotFound("no strata workspace is mounted at " + mountpoint));
  auto counters = DaemonCounters(**store, found->first);
  if (!counters.ok()) return Fail(counters.status());
  const auto& ops = (*counters)["operations"];
  const auto& ws = (*counters)["workspace"];
  const uint64_t changed = ws["changed_paths"].get<uint64_t>();
  if (g.json) {
    nlohmann::ordered_json j{{"workspace", found->first}, {"mountpoint", mountpoint}, {"daemon_pid", found->second.pid},
                             {"changed_paths", changed}, {"operations", ops}, {"workspace_counters", ws}};
    if (counters->contains("request_loop")) j["request_loop"] = (*counters)["request_loop"];  // absent from older daemons
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("workspace {} at {} (daemon {}), {} changed paths\n", found->first, mountpoint, found->second.pid,
             changed);
  fmt::print("{:<12} {:>10} {:>8}  {}\n", "OPERATION", "COUNT", "ERRORS", "MEDIAN LATENCY");
  for (auto& [op, v] : ops.items())
    fmt::print("{:<12} {:>10} {:>8}  {}\n", op, v["count"].get<uint64_t>(), v["errors"].get<uint64_t>(), MedianBucket(v));
  const uint64_t batches = ws["batches_committed"].get<uint64_t>();
  fmt::print("\ncommits     {} batches holding {} operations, {:.1f} ms mean, {:.1f} ms max; {} syncs\n", batches,
             ws["operations_committed"].get<uint64_t>(),
             batches ? ws["commit_us_total"].get<double>() / batches / 1000 : 0.0,
             ws["commit_us_max"].get<double>() / 1000, ws["syncs"].get<uint64_t>());
  fmt::print("data        {} written, {} read", HumanBytes(ws["bytes_written"].get<uint64_t>()),
             HumanBytes(ws["bytes_read"].get<uint64_t>()));
  // Absent from a daemon older than this command.
  if (ws.contains("data_files_to_delete") && ws["data_files_to_delete"].is_number_unsigned())
    fmt::print("; {} removed files still being deleted", ws["data_files_to_delete"].get<uint64_t>());
  fmt::print("\n");
  const auto& cache = ws["chunk_cache"];
  fmt::print("base        {} directories loaded; chunk cache {} hits, {} misses, {} waits\n",
             ws["directories_loaded"].get<uint64_t>(), cache["hits"].get<uint64_t>(),
             cache["misses"].get<uint64_t>(), cache["waits"].get<uint64_t>());
  if (ws.contains("read_path")) PrintReadPath(ws["read_path"]);
  if (counters->contains("request_loop")) {
    const auto& loop = (*counters)["request_loop"];
    fmt::print("requests    {} answered by the dispatcher, {} by workers; {} caught while polling, {} sleeps\n",
               loop["inline_requests"].get<uint64_t>(), loop["worker_requests"].get<uint64_t>(),
               loop["caught_polling"].get<uint64_t>(), loop["sleeps"].get<uint64_t>());
  }
  return kExitOk;
}

}  // namespace strata::cli
