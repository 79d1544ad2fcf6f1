// gc --remote: collecting a remote store while other machines push to it
// (remote/remote_gc.h). This machine's workspaces of the remote are roots;
// other machines announce what they rely on through leases.
#include <fmt/format.h>

#include <chrono>

#include "cli/cli.h"
#include "cli/gc_run.h"
#include "remote/remote.h"
#include "remote/remote_gc.h"
#include "util/progress.h"

namespace strata::cli {
namespace {

nlohmann::ordered_json RequestsJson(const S3RequestCounts& c) {
  return {{"total", c.total()},   {"get", c.get},       {"get_range", c.get_range},
          {"head", c.head},       {"list", c.list},     {"put", c.put},
          {"put_if", c.put_if},   {"delete", c.delete_one}, {"delete_many", c.delete_many},
          {"keys_deleted", c.keys_deleted}, {"other", c.other}};
}

nlohmann::ordered_json RemoteGcJson(const RemoteGcReport& r, bool dry_run) {
  nlohmann::ordered_json j;
  j["dry_run"] = dry_run;
  j["roots"] = r.roots;
  j["objects_before"] = r.objects_before;
  j["objects_condemned"] = r.objects_condemned;
  j["objects_deleted"] = r.objects_deleted;
  j["bytes_deleted"] = r.bytes_deleted;
  j["packs_before"] = r.packs_before;
  j["packs_deleted"] = r.packs_deleted;
  j["packs_kept_partly_live"] = r.packs_kept_partly_live;
  j["packs_rewritten"] = r.packs_rewritten;
  j["packs_written"] = r.packs_written;
  j["pack_bytes_written"] = r.pack_bytes_written;
  j["repack_bytes_read"] = r.repack_bytes_read;
  j["pack_bytes_before"] = r.pack_bytes_before;
  j["pack_bytes_deleted"] = r.pack_bytes_deleted;
  j["packs_not_deleted"] = r.packs_not_deleted;
  if (r.packs_not_deleted) j["not_deleted_reason"] = r.not_deleted_reason;
  j["leases_waited"] = r.leases_waited;
  j["leases_expired"] = r.leases_expired;
  j["lists_removed"] = r.lists_removed;
  j["trees_read"] = r.trees_read;
  j["ms"] = {{"mark", r.mark_ms}, {"repack", r.repack_ms}, {"wait", r.wait_ms}, {"delete", r.delete_ms}};
  j["requests"] = {{"mark", RequestsJson(r.requests_mark)},
                   {"repack", RequestsJson(r.requests_repack)},
                   {"wait", RequestsJson(r.requests_wait)},
                   {"delete", RequestsJson(r.requests_delete)}};
  return j;
}

void PrintRemoteGc(const std::string& remote, const RemoteGcReport& r, bool dry_run) {
  fmt::print("{} {} of {} packs ({}, {} objects) of remote {}; {} objects reachable from none of {} roots\n",
             dry_run ? "would delete" : "deleted", r.packs_deleted, r.packs_before, HumanBytes(r.pack_bytes_deleted),
             r.objects_deleted, remote, r.objects_condemned, r.roots);
  if (r.packs_rewritten && dry_run)
    fmt::print("would rewrite {} small or mostly-dead packs, copying their live objects into new packs\n",
               r.packs_rewritten);
  else if (r.packs_rewritten)
    fmt::print("rewrote {} small or mostly-dead packs: their live objects were copied into {} new packs ({})\n",
               r.packs_rewritten, r.packs_written, HumanBytes(r.pack_bytes_written));
  if (r.packs_not_deleted)
    fmt::print("{} packs could not be deleted ({}); the next gc deletes them\n", r.packs_not_deleted,
               r.not_deleted_reason);
  if (r.packs_kept_partly_live)
    fmt::print("{} packs hold unreachable objects beside live ones and stay whole\n", r.packs_kept_partly_live);
  if (dry_run) return;
  fmt::print("waited {:.1f} s for {} writer(s) that began before the gc ({} had run out); marking {:.1f} s, "
             "repacking {:.1f} s, deleting {:.1f} s\n",
             r.wait_ms / 1000, r.leases_waited, r.leases_expired, r.mark_ms / 1000, r.repack_ms / 1000,
             r.delete_ms / 1000);
  const uint64_t requests = r.requests_mark.total() + r.requests_repack.total() + r.requests_wait.total() +
                            r.requests_delete.total();
  fmt::print("{} requests to the bucket: marking {}, repacking {}, waiting {}, deleting {}\n", requests,
             r.requests_mark.total(), r.requests_repack.total(), r.requests_wait.total(), r.requests_delete.total());
}

}  // namespace

nlohmann::ordered_json RemoteRequestsJson(Store& store) {
  auto counts = RemoteRequestCounts(store);
  return counts ? RequestsJson(*counts) : nlohmann::ordered_json();
}

int RunRemoteGc(const Globals& g, const RemoteGcArgs& args) {
  const bool dry_run = args.dry_run;
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  Progress progress(dry_run ? "gc (dry run)" : "gc", 0, 0);
  auto forgotten = RemoteForgottenCommits(**store);
  if (!forgotten.ok()) return Fail(forgotten.status());
  RemoteGcOptions options;
  options.forgotten = std::move(forgotten).value();
  options.dry_run = dry_run;
  options.grace = std::chrono::milliseconds(static_cast<int64_t>(args.grace_seconds * 1000));
  options.repack_threshold = args.repack_threshold;
  options.max_repack_bytes = args.max_repack_mib << 20;
  options.extra_roots = [&] { return WorkspaceRoots(**store); };
  options.progress = &progress;
  if (Progress::StderrIsTerminal())
    options.note = [](std::string_view what) { fmt::print(stderr, "\r\033[Kgc: {}\n", what); };
  auto report = CollectRemoteGarbage(**store, options);
  progress.Finish();
  if (!report.ok()) return Fail(report.status().WithContext("gc of remote " + g.remote));
  if (g.json) {
    nlohmann::ordered_json j = RemoteGcJson(*report, dry_run);
    // Opening the remote included.
    j["requests"]["command"] = RemoteRequestsJson(**store);
    PrintJson(j);
  }
  else PrintRemoteGc(g.remote, *report, dry_run);
  return kExitOk;
}

}  // namespace strata::cli
