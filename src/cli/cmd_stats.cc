// `strata stats MOUNTPOINT`: the counters of the daemon serving a mount, as
// its control socket reports them (control/protocol.h), for people or --json.
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "cli/change_rows.h"
#include "cli/cli.h"
#include "control/socket.h"
#include "daemon/mount_record.h"
#include "util/progress.h"
#include "workspace/workspace.h"

namespace strata::cli {

Result<control::StatsReply> DaemonCounters(const Store& store, const std::string& name) {
  return control::Ask(Workspace::StateDir(store, name) + "/control.sock", control::StatsRequest{});
}

namespace {

// The bucket holding the median of an operation's latency histogram.
std::string MedianBucket(const control::OperationCounters& op) {
  uint64_t seen = 0;
  for (const auto& [below, n] : op.latency_us) {
    seen += n;
    if (seen * 2 >= op.count) return "<" + std::to_string(below) + " us";
  }
  return "?";
}

// The read path of base data: chunk demands and loads, read-ahead, the store's
// reads; `reads`, the read requests served, for the frames decoded per read.
void PrintReadPath(const WorkspaceCounters::ReadPath& r, uint64_t reads) {
  const StoreReadCounters& s = r.store;
  fmt::print("read path   {} chunk demands, {} fetches ({} errors, at most {} at once); cache {} of {}\n", r.demands,
             r.fetches, r.fetch_errors, r.fetches_in_flight_max, HumanBytes(r.cache_bytes),
             HumanBytes(r.cache_capacity));
  fmt::print("read-ahead  {} issued, {} used, {} wasted, {} skipped at a bound\n", r.readahead_issued,
             r.readahead_used, r.readahead_wasted, r.readahead_skipped);
  fmt::print("store reads {} objects, {} read, {} verified; {:.1f} ms index, {:.1f} ms pread, {:.1f} ms decode; "
             "at most {} at once\n",
             s.objects, HumanBytes(s.bytes_stored), HumanBytes(s.bytes_verified), s.lookup_us / 1000.0,
             s.pread_us / 1000.0, s.decode_us / 1000.0, s.max_in_flight);
  fmt::print("checks      {} frames decoded ({:.1f} per object read, {:.2f} per read request, {} reads of some "
             "frames only); {} checked by XXH3, {} by SHA-256\n",
             s.frames_decoded, s.objects ? static_cast<double>(s.frames_decoded) / s.objects : 0.0,
             reads ? static_cast<double>(s.frames_decoded) / reads : 0.0, s.range_reads,
             HumanBytes(s.fast_checked_bytes), HumanBytes(s.sha256_checked_bytes));
  // A remote store's block cache has counters; a local store has none.
  auto backend = [&](const char* name) -> std::optional<uint64_t> {
    for (const auto& [key, value] : s.backend)
      if (key == name) return value;
    return std::nullopt;
  };
  if (backend("cache_misses")) {
    auto v = [&](const char* name) { return backend(name).value_or(0); };
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
  const WorkspaceCounters& ws = counters->workspace;
  const WorkspaceTarget target{found->first, MountedWorkspace{found->first, found->second.pid, mountpoint}};
  // Paths, as status and diff count them; the daemon's own counter is of
  // inodes. Unknown ("?") while the daemon makes a commit: shown instead.
  const auto changed = WorkspaceChangeCount(**store, target);
  const auto commit = DaemonCommitProgress(**store, target);
  // The commit the mount shows (its base): a follow mount's moves on.
  std::string base;
  if (auto list = Workspace::List(**store); list.ok())
    for (const WorkspaceInfo& w : *list)
      if (w.name == found->first && w.base) base = w.base->ToHex();
  if (g.json) {
    PrintJson({{"workspace", found->first},
               {"mountpoint", mountpoint},
               {"daemon_pid", found->second.pid},
               {"base", base},
               {"changed_paths", CountJson(changed)},
               {"commit", commit ? control::ToJson(*commit) : nlohmann::ordered_json()},
               {"operations", control::ToJson(counters->operations)},
               {"workspace_counters", control::ToJson(ws)},
               {"request_loop", control::ToJson(counters->request_loop)},
               {"transport", counters->transport},
               {"passthrough", control::ToJson(counters->passthrough)},
               {"fuse_requests", control::ToJson(counters->fuse_requests)}});
    return kExitOk;
  }
  fmt::print("workspace {} at {} (daemon {}), {} changed paths\n", found->first, mountpoint, found->second.pid,
             CountText(changed));
  if (!base.empty()) fmt::print("shows commit {}\n", base);
  if (commit && CommitIsRunning(commit->phase))
    fmt::print("committing  {}: {} of {} files, {} of {}\n", CommitPhaseName(commit->phase), commit->files_done,
               commit->files_total, HumanBytes(commit->bytes_done), HumanBytes(commit->bytes_total));
  fmt::print("transport   {}\n", counters->transport);
  if (counters->transport != "libfuse")
    fmt::print("requests    {} over io_uring, {} read from /dev/fuse\n", counters->fuse_requests.over_io_uring,
               counters->fuse_requests.read_from_dev_fuse);
  const control::PassthroughCounters& pt = counters->passthrough;
  if (pt.on)
    fmt::print("passthrough on: {} opens served by the kernel ({} for writing), {} through the daemon (not "
               "eligible), {} write opens through the daemon while a commit's cut held\n",
               pt.opens, pt.write_opens, pt.declined, pt.held);
  else
    fmt::print("passthrough off\n");
  fmt::print("{:<12} {:>10} {:>8}  {}\n", "OPERATION", "COUNT", "ERRORS", "MEDIAN LATENCY");
  for (const control::OperationCounters& op : counters->operations)
    fmt::print("{:<12} {:>10} {:>8}  {}\n", op.name, op.count, op.errors, MedianBucket(op));
  const uint64_t batches = ws.batches_committed;
  fmt::print("\ncommits     {} batches holding {} operations, {:.1f} ms mean, {:.1f} ms max; {} syncs\n", batches,
             ws.operations_committed, batches ? static_cast<double>(ws.commit_us_total) / batches / 1000 : 0.0,
             ws.commit_us_max / 1000.0, ws.syncs);
  fmt::print("data        {} written, {} read; {} removed files still being deleted\n", HumanBytes(ws.bytes_written),
             HumanBytes(ws.bytes_read), ws.data_files_to_delete);
  fmt::print("base        {} directories loaded; chunk cache {} hits, {} misses, {} waits\n", ws.directories_loaded,
             ws.chunk_cache_hits, ws.chunk_cache_misses, ws.chunk_cache_waits);
  uint64_t reads = 0;
  for (const control::OperationCounters& op : counters->operations)
    if (op.name == "read") reads = op.count;
  PrintReadPath(ws.read_path, reads);
  const control::RequestLoopCounters& loop = counters->request_loop;
  if (counters->transport == "libfuse")  // the request loop is the libfuse transport's
    fmt::print("requests    {} answered by the dispatcher, {} by workers; {} caught while polling, {} sleeps\n",
               loop.inline_requests, loop.worker_requests, loop.caught_polling, loop.sleeps);
  return kExitOk;
}

}  // namespace strata::cli
