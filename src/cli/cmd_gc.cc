// gc, fsck: removing what nothing reaches, and checking that everything
// reached is there. Both treat every workspace's base (read-only mounts
// included) as a root, so a mounted commit is never collected.
#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/gc_run.h"
#include "store/fsck.h"
#include "store/gc.h"
#include "util/progress.h"
#include "workspace/workspace.h"
#include "workspace/workspace_fsck.h"

namespace strata::cli {

Result<std::vector<RootSet>> WorkspaceRoots(Store& store) {
  STRATA_ASSIGN_OR_RETURN(auto workspaces, Workspace::List(store));
  std::vector<RootSet> roots;
  for (const WorkspaceInfo& w : workspaces) {
    STRATA_ASSIGN_OR_RETURN(auto refs, Workspace::References(store, w.name));
    roots.push_back({"workspace " + w.name, refs.base, std::move(refs.trees), std::move(refs.chunks)});
  }
  return roots;
}

Result<GcReport> CollectGarbageWithProgress(Store& store, bool dry_run, double repack_threshold,
                                            const std::vector<Hash>& also_forgotten) {
  Progress progress(dry_run ? "gc (dry run)" : "gc", 0, 0);
  GcOptions options;
  options.dry_run = dry_run;
  options.also_forgotten = also_forgotten;
  options.repack_threshold = repack_threshold;
  options.extra_roots = [&] { return WorkspaceRoots(store); };
  options.progress = &progress;
  if (Progress::StderrIsTerminal())
    options.note = [](std::string_view what) { fmt::print(stderr, "\r\033[Kgc: {}\n", what); };
  auto report = CollectGarbage(store, options);
  progress.Finish();
  return report;
}

nlohmann::ordered_json GcReportJson(const GcReport& r, bool dry_run) {
  nlohmann::ordered_json j;
  j["dry_run"] = dry_run;
  j["roots"] = r.roots;
  j["objects_before"] = r.objects_before;
  j["objects_deleted"] = r.objects_deleted;
  j["bytes_deleted"] = r.bytes_deleted;
  j["packs_before"] = r.packs_before;
  j["packs_after"] = r.packs_after;
  j["packs_removed"] = r.packs_removed;
  j["packs_rewritten"] = r.packs_rewritten;
  j["packs_written"] = r.packs_written;
  j["bytes_copied"] = r.bytes_copied;
  j["pack_bytes_before"] = r.pack_bytes_before;
  j["pack_bytes_after"] = r.pack_bytes_after;
  j["pack_bytes_removed"] = r.pack_bytes_removed;
  j["pack_bytes_written"] = r.pack_bytes_written;
  j["bytes_reclaimed"] = r.reclaimed();
  j["trees_read"] = r.trees_read;
  j["ms"] = {{"mark", r.mark_ms}, {"delete", r.delete_ms}, {"repack", r.repack_ms}, {"locked", r.locked_ms}};
  return j;
}

void PrintGcReport(const GcReport& r, bool dry_run) {
  if (dry_run) {
    fmt::print("would delete {} of {} objects ({} stored) reachable from none of {} roots\n", r.objects_deleted,
               r.objects_before, HumanBytes(r.bytes_deleted), r.roots);
    return;
  }
  fmt::print("deleted {} of {} objects ({} stored) reachable from none of {} roots\n", r.objects_deleted,
             r.objects_before, HumanBytes(r.bytes_deleted), r.roots);
  fmt::print("packs: {} before, {} removed, {} rewritten into {}, {} after ({} copied)\n", r.packs_before,
             r.packs_removed, r.packs_rewritten, r.packs_written, r.packs_after, HumanBytes(r.bytes_copied));
  // What gc removed less what it wrote: the packs on disk may also have
  // grown by what commits and imports wrote meanwhile, which is said apart.
  const uint64_t others = r.pack_bytes_after + r.pack_bytes_removed -
                          std::min(r.pack_bytes_after + r.pack_bytes_removed, r.pack_bytes_before + r.pack_bytes_written);
  fmt::print("reclaimed {} ({} of packs removed, {} written) in {:.1f} s; writers were held back {:.0f} ms\n",
             HumanBytes(r.reclaimed()), HumanBytes(r.pack_bytes_removed), HumanBytes(r.pack_bytes_written),
             (r.mark_ms + r.delete_ms + r.repack_ms) / 1000, r.locked_ms);
  fmt::print("packs on disk: {} -> {}{}\n", HumanBytes(r.pack_bytes_before), HumanBytes(r.pack_bytes_after),
             others > 0 ? fmt::format(" ({} written by other commands while gc ran)", HumanBytes(others)) : "");
}

namespace {

struct GcArgs {
  bool dry_run = false;
  double repack_threshold = 0.5;
  double grace_seconds = kDefaultRemoteGcGraceSeconds;
  uint64_t max_repack_mib = kDefaultMaxRepackMib;
  CLI::Option* grace = nullptr;  // given or not
  CLI::Option* max_repack = nullptr;
};

int RunGc(Globals& g, const GcArgs& a) {
  // Other machines may be writing to a remote store, and gc's lock is a local
  // file: a remote has a protocol of its own.
  if (!g.remote.empty()) {
    return RunRemoteGc(g, RemoteGcArgs{a.dry_run, a.grace_seconds, a.repack_threshold, a.max_repack_mib});
  }
  if (a.grace->count() > 0) return UsageError("--grace is for the gc of a remote store (--remote NAME)");
  if (a.max_repack->count() > 0)
    return UsageError("--max-repack-mib is for the gc of a remote store (--remote NAME); a local gc rewrites "
                      "every pack below --repack-threshold");
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto report = CollectGarbageWithProgress(**store, a.dry_run, a.repack_threshold);
  if (!report.ok()) return Fail(report.status());
  if (g.json) {
    PrintJson(GcReportJson(*report, a.dry_run));
    return kExitOk;
  }
  PrintGcReport(*report, a.dry_run);
  return kExitOk;
}

int RunFsck(Globals& g) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto roots = WorkspaceRoots(**store);
  if (!roots.ok()) return Fail(roots.status());
  Progress progress("fsck", 0, 0);
  auto report = CheckStore(**store, *roots, &progress);
  progress.Finish();
  if (!report.ok()) return Fail(report.status());
  const FsckReport& r = *report;
  // The workspaces' own files: data files their extents need (file_data.h).
  std::vector<std::pair<std::string, std::string>> workspace_damage;  // (workspace, message)
  auto workspaces = Workspace::List(**store);
  if (!workspaces.ok()) return Fail(workspaces.status());
  for (const WorkspaceInfo& w : *workspaces) {
    auto problems = CheckWorkspaceDataFiles(**store, w.name);
    if (!problems.ok()) return Fail(problems.status());
    for (std::string& p : *problems) workspace_damage.emplace_back(w.name, std::move(p));
  }
  const bool ok = r.ok() && workspace_damage.empty();
  if (g.json) {
    nlohmann::ordered_json j;
    j["ok"] = ok;
    j["packs"] = r.integrity.packs;
    j["objects"] = r.integrity.objects;
    j["roots"] = r.roots;
    j["reachable"] = r.reachable;
    j["unreachable"] = r.unreachable;
    j["damaged"] = nlohmann::ordered_json::array();
    for (const auto& p : r.integrity.problems)
      j["damaged"].push_back({{"pack", p.pack}, {"object", p.object}, {"message", p.message}});
    for (const auto& [w, m] : workspace_damage) j["damaged"].push_back({{"workspace", w}, {"message", m}});
    j["missing"] = nlohmann::ordered_json::array();
    for (const auto& p : r.missing)
      j["missing"].push_back({{"object", p.object}, {"where", p.where}, {"message", p.message}});
    PrintJson(j);
  } else {
    for (const auto& p : r.integrity.problems) {
      std::string where = p.object.empty() ? "pack " + p.pack
                                           : "object " + p.object + (p.pack.empty() ? "" : " in pack " + p.pack);
      fmt::print("damaged: {}: {}\n", where, p.message);
    }
    for (const auto& p : r.missing) fmt::print("missing: {} at {}: {}\n", p.object, p.where, p.message);
    for (const auto& [w, m] : workspace_damage) fmt::print("damaged: workspace '{}': {}\n", w, m);
    fmt::print("{}: {} packs, {} objects; {} reachable from {} roots, {} unreachable (gc deletes them)\n",
               ok ? "ok" : "DAMAGED", r.integrity.packs, r.integrity.objects, r.reachable, r.roots,
               r.unreachable);
  }
  return ok ? kExitOk : kExitDamaged;
}

}  // namespace

void RegisterGcCommands(CLI::App& app, Globals& g, int* exit_code) {
  static GcArgs a;  // option storage must outlive parsing
  auto* gc = app.add_subcommand("gc", "delete objects no branch or workspace reaches; repack mostly-dead packs");
  gc->add_flag("--dry-run", a.dry_run, "report what would be deleted; change nothing");
  gc->add_option("--repack-threshold", a.repack_threshold,
                 "rewrite packs whose live share of bytes is below this (0 to 1; 0 never rewrites)")
      ->check(FiniteRange(0.0, 1.0));
  a.grace = gc->add_option("--grace", a.grace_seconds,
                 "with --remote: seconds to wait after announcing what goes before deleting it; longer than any "
                 "writer's request timeout (default 900)")
      ->type_name("SECONDS")
      ->check(FiniteRange(0.0, 86400.0));
  a.max_repack = gc->add_option("--max-repack-mib", a.max_repack_mib,
                                "with --remote: read at most this many MiB of packs per run to merge small packs "
                                "and rewrite mostly-dead ones (default 512; 0 never repacks)")
                     ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30));
  gc->add_flag("--json", g.json, "machine-readable output");
  gc->callback([&g, exit_code] { *exit_code = RunGc(g, a); });

  auto* fsck = app.add_subcommand("fsck", "check integrity and reachability of everything in the store");
  fsck->add_flag("--json", g.json, "machine-readable output");
  fsck->callback([&g, exit_code] { *exit_code = RunFsck(g); });
}

}  // namespace strata::cli
