// forget: a retention policy applied to branch history (store/forget.h for
// what forgetting a commit means), and with --prune the gc that frees what
// only the forgotten commits held.
#include <fmt/format.h>

#include <ctime>

#include "cli/cli.h"
#include "cli/gc_run.h"
#include "remote/remote_gc.h"
#include "store/forget.h"
#include "store/index.h"
#include "util/progress.h"
#include "util/thread_pool.h"
#include "util/time_ns.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

struct ForgetArgs {
  std::vector<std::string> branches;
  bool all = false;
  RetentionPolicy policy;
  std::string within;
  bool dry_run = false, prune = false;
};

// The commit's time in the zone the policy counts periods in.
std::string PolicyTime(int64_t ns, bool utc) {
  const time_t t = static_cast<time_t>(SplitNs(ns).sec);
  std::tm tm{};
  if (utc) ::gmtime_r(&t, &tm);
  else ::localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", &tm);
  return buf;
}

// A remote's commits are read one GET each (a push leaves nothing in the
// block cache), and the walk along parents cannot overlap them: fetched here
// several at a time first, the walk then reads them from the cache. Only up
// to a bound, so that forgetting on one branch of a remote of very many
// commits does not fetch them all. Best effort: the walk reports what fails.
void PrefetchRemoteCommits(Store& store) {
  constexpr size_t kMaxCommits = 20000, kThreads = 8;
  auto commits = store.index()->FindByPrefix(ObjectType::kCommit, "", kMaxCommits + 1);
  if (!commits.ok() || commits->size() > kMaxCommits) return;
  ThreadPool pool(kThreads);
  for (const Hash& id : *commits) pool.Submit([&store, id] { (void)store.Get(id, ObjectType::kCommit); });
  pool.Wait();
}

Result<ProtectedCommits> WorkspaceBases(Store& store) {
  STRATA_ASSIGN_OR_RETURN(auto workspaces, Workspace::List(store));
  ProtectedCommits bases;
  for (const WorkspaceInfo& w : workspaces)
    if (w.base) bases.emplace(*w.base, "base of workspace " + w.name);
  return bases;
}

nlohmann::ordered_json PlanJson(const ForgetPlan& plan, const RetentionPolicy& policy) {
  nlohmann::ordered_json branches = nlohmann::ordered_json::array();
  for (const ForgetBranchPlan& b : plan.branches) {
    nlohmann::ordered_json kept = nlohmann::ordered_json::array(), forgotten = nlohmann::ordered_json::array();
    for (const RetentionDecision& d : b.line) {
      if (d.kept()) kept.push_back({{"id", d.id.ToHex()}, {"time", d.time_ns}, {"reasons", d.reasons}});
      else forgotten.push_back({{"id", d.id.ToHex()}, {"time", d.time_ns}});
    }
    branches.push_back({{"branch", b.branch},
                        {"head", b.head.ToHex()},
                        {"kept", kept},
                        {"forgotten", forgotten},
                        {"forgotten_before", b.already_forgotten}});
  }
  nlohmann::ordered_json j;
  j["policy"] = policy.ToString();
  j["utc"] = policy.utc;
  j["branches"] = branches;
  return j;
}

void PrintPlan(const ForgetPlan& plan, const RetentionPolicy& policy) {
  for (const ForgetBranchPlan& b : plan.branches) {
    const uint64_t kept = b.kept();
    fmt::print("branch {}: {} commits, keeping {}, forgetting {}", b.branch, b.line.size(), kept,
               b.line.size() - kept);
    if (b.already_forgotten) fmt::print(" ({} forgotten before)", b.already_forgotten);
    fmt::print("\n");
    for (const RetentionDecision& d : b.line)
      fmt::print("  {:6}  {}  {}{}{}\n", d.kept() ? "keep" : "forget", ShortId(d.id), PolicyTime(d.time_ns, policy.utc),
                 d.kept() ? "  " : "", fmt::join(d.reasons, ", "));
  }
}

int RunForget(Globals& g, ForgetArgs& a) {
  // A remote's forgotten set lives in its bucket; its gc is `gc --remote`,
  // whose grace this command does not take.
  const bool remote = !g.remote.empty();
  if (remote && a.prune)
    return UsageError("--prune is for a local store: on a remote, run 'strata gc --remote " + g.remote + "' after");
  if (a.all == !a.branches.empty())
    return UsageError("say which history to forget from: --branch B (repeatable) or --all");
  if (!a.within.empty()) {
    auto d = ParseRetentionDuration(a.within);
    if (!d.ok()) return Fail(d.status());
    a.policy.within = *d;
  }
  if (a.policy.empty()) return Fail(ApplyRetention({}, a.policy).status());
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto bases = WorkspaceBases(**store);
  if (!bases.ok()) return Fail(bases.status());

  Progress progress("forget: reading history", 0, 0);
  if (remote) PrefetchRemoteCommits(**store);
  auto plan = PlanForget(**store, a.branches, a.policy, *bases, &progress);
  progress.Finish();
  if (!plan.ok()) return Fail(plan.status());
  uint64_t recorded = 0;
  if (!a.dry_run) {
    std::function<Status(const std::vector<Hash>&)> record;
    if (remote) record = [&](const std::vector<Hash>& commits) { return RecordRemoteForgotten(**store, commits); };
    auto n = RecordForget(**store, *plan, [&] { return WorkspaceBases(**store); }, record);
    if (!n.ok()) return Fail(n.status().WithContext("recording the forgotten commits"));
    recorded = *n;
  }
  const uint64_t forgotten = a.dry_run ? plan->forget.size() : recorded;

  // The plan is printed before gc runs, so that a failing gc leaves it said.
  if (!g.json) {
    PrintPlan(*plan, a.policy);
    fmt::print("{} {} commit{} on {} branch{}{}\n", a.dry_run ? "would forget" : "forgot", forgotten,
               forgotten == 1 ? "" : "s", plan->branches.size(), plan->branches.size() == 1 ? "" : "es",
               a.dry_run ? " (dry run: nothing changed)" : "");
    std::fflush(stdout);
  }
  std::optional<GcReport> gc;
  if (a.prune) {
    // A dry run recorded nothing: its gc counts the planned commits as forgotten.
    auto report = CollectGarbageWithProgress(**store, a.dry_run, 0.5,
                                             a.dry_run ? plan->forget : std::vector<Hash>{});
    if (!report.ok())
      return Fail(report.status().WithContext(
          a.dry_run ? std::string("gc's dry run failed")
                    : "forget recorded " + std::to_string(forgotten) + " commits, then gc failed"));
    gc = *report;
  }

  if (g.json) {
    nlohmann::ordered_json j = PlanJson(*plan, a.policy);
    j["dry_run"] = a.dry_run;
    j["commits_forgotten"] = forgotten;
    if (gc) j["gc"] = GcReportJson(*gc, a.dry_run);
    if (remote) j["requests"] = RemoteRequestsJson(**store);
    PrintJson(j);
  } else if (gc) {
    PrintGcReport(*gc, a.dry_run);
  } else if (!a.dry_run && forgotten > 0) {
    if (remote) fmt::print("run 'strata gc --remote {}' to free their data\n", g.remote);
    else fmt::print("run 'strata gc' (or forget --prune) to free their data\n");
  }
  return kExitOk;
}

}  // namespace

void RegisterForgetCommands(CLI::App& app, Globals& g, int* exit_code) {
  static ForgetArgs a;  // option storage must outlive parsing
  auto* f = app.add_subcommand("forget", "let go of old commits of branches by a retention policy (restic's meaning)");
  f->add_option("-b,--branch", a.branches, "the branch whose history is thinned (repeatable)")->type_name("BRANCH");
  f->add_flag("--all", a.all, "every branch");
  f->add_option("--keep-last", a.policy.last, "keep the N newest commits")->type_name("N");
  // The N newest periods of each kind that hold a commit (retention.h).
  struct Period {
    const char *option, *period;
    uint32_t* count;
  };
  for (const Period& p : {Period{"--keep-hourly", "hour", &a.policy.hourly},
                          Period{"--keep-daily", "day", &a.policy.daily},
                          Period{"--keep-weekly", "ISO week", &a.policy.weekly},
                          Period{"--keep-monthly", "month", &a.policy.monthly},
                          Period{"--keep-yearly", "year", &a.policy.yearly}})
    f->add_option(p.option, *p.count,
                  fmt::format("keep the newest commit of each of the last N {}s with commits", p.period))
        ->type_name("N");
  f->add_option("--keep-within", a.within,
                "keep every commit newer than the newest minus DURATION (e.g. 2y5m7d3h: years, months, days, hours)")
      ->type_name("DURATION");
  f->add_flag("--utc", a.policy.utc, "count hours, days, weeks, months and years in UTC instead of local time");
  f->add_flag("--dry-run", a.dry_run, "show what would be kept and forgotten; change nothing");
  f->add_flag("--prune", a.prune, "run gc afterwards, freeing what only the forgotten commits held");
  f->add_flag("--json", g.json, "machine-readable output");
  f->callback([&g, exit_code] { *exit_code = RunForget(g, a); });
}

}  // namespace strata::cli
