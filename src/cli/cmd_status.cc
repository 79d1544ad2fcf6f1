// strata status: what a workspace would commit, and where it stands against
// its branch, as `git status` tells it.
//
// The changes are those `strata diff WORKSPACE` lists (the same snapshot and
// the same tree walk, so the two always agree). The branch has moved on when
// its head is no longer the workspace's base: another workspace committed to
// it, or it was moved. "behind" counts the branch's commits the base lacks,
// "ahead" the base's commits the branch lacks (a branch moved back, or
// elsewhere). Reads only; exits 0 whatever it finds.
#include <fmt/format.h>

#include <deque>
#include <unordered_set>

#include "cli/change_rows.h"
#include "cli/cli.h"
#include "cli/workspace_target.h"

namespace strata::cli {
namespace {

struct StatusArgs {
  std::string target;
  bool short_form = false;
};

// Every commit `tip` reaches, itself included; a commit missing from the
// store (forgotten) ends its line.
Result<std::unordered_set<Hash>> Reachable(Store& store, const Hash& tip) {
  std::unordered_set<Hash> seen;
  for (std::deque<Hash> todo{tip}; !todo.empty(); todo.pop_front()) {
    if (!seen.insert(todo.front()).second) continue;
    auto commit = store.GetCommit(todo.front());
    if (!commit.ok()) {
      if (commit.status().IsNotFound()) continue;
      return commit.status();
    }
    for (const Hash& p : commit->parents) todo.push_back(p);
  }
  return seen;
}

size_t CountMissing(const std::unordered_set<Hash>& from, const std::unordered_set<Hash>& in) {
  size_t n = 0;
  for (const Hash& h : from) n += in.count(h) == 0;
  return n;
}

struct BranchState {
  std::optional<Hash> head;  // nullopt: no branch, or it does not exist (yet)
  size_t behind = 0, ahead = 0;
};

Result<BranchState> CompareWithBranch(Store& store, const std::string& branch, const std::optional<Hash>& base) {
  BranchState out;
  if (branch.empty()) return out;
  STRATA_ASSIGN_OR_RETURN(out.head, store.GetRef(branch));
  if (!out.head || out.head == base) return out;
  STRATA_ASSIGN_OR_RETURN(auto on_branch, Reachable(store, *out.head));
  std::unordered_set<Hash> in_base;
  if (base) {
    STRATA_ASSIGN_OR_RETURN(in_base, Reachable(store, *base));
  }
  out.behind = CountMissing(on_branch, in_base);
  out.ahead = CountMissing(in_base, on_branch);
  return out;
}

std::string Commits(size_t n) { return fmt::format("{} commit{}", n, n == 1 ? "" : "s"); }

// One line on the branch, or "" when there is no branch to speak of.
std::string BranchLine(const std::string& branch, const BranchState& b, const std::optional<Hash>& base) {
  if (branch.empty()) return "tracking no branch (the first commit names one: strata commit --branch B)";
  if (!b.head) return fmt::format("branch {} does not exist yet: the first commit creates it", branch);
  if (b.head == base) return fmt::format("up to date with branch {}", branch);
  if (b.ahead == 0)
    return fmt::format("branch {} moved on: {} new since the base (take them with strata rebase)", branch,
                       Commits(b.behind));
  return fmt::format("branch {} no longer holds the base: {} of the base are not on it, {} on it are not in the base",
                     branch, Commits(b.ahead), Commits(b.behind));
}

nlohmann::ordered_json HashOrNull(const std::optional<Hash>& h) {
  return h ? nlohmann::ordered_json(h->ToHex()) : nlohmann::ordered_json();
}

int RunStatus(Globals& g, const StatusArgs& a) {
  auto store = OpenStoreFor(g, a.target);
  if (!store.ok()) return Fail(store.status());
  // Held to the end: the snapshot's trees are reachable from no ref.
  auto session = (*store)->BeginWrite();
  if (!session.ok()) return Fail(session.status());
  auto target = ResolveWorkspace(**store, a.target);
  if (!target.ok()) return Fail(target.status());
  if (IsReadOnlyMount(target->name))
    return Fail(Status::InvalidArgument("'" + a.target + "' is a read-only mount of a commit: it changes nothing"));
  if (!target->mounted && !WorkspaceExists(**store, target->name))
    return Fail(Status::NotFound("no workspace '" + target->name + "'"));
  WorkspaceSnapshot snap;
  auto rows = WorkspaceChanges(**store, *target, &snap);
  if (!rows.ok()) return Fail(rows.status());
  auto list = Workspace::List(**store);
  if (!list.ok()) return Fail(list.status());
  std::string branch;
  for (const WorkspaceInfo& w : *list)
    if (w.name == target->name) branch = w.branch;
  auto state = CompareWithBranch(**store, branch, snap.base);
  if (!state.ok()) return Fail(state.status());
  const std::string mountpoint = target->mounted ? target->mounted->mountpoint : "";

  if (g.json) {
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const ChangeRow& r : *rows) changes.push_back(RowJson(r));
    PrintJson({{"workspace", target->name},
               {"mounted_at", mountpoint},
               {"base", HashOrNull(snap.base)},
               {"branch", branch},
               {"branch_head", HashOrNull(state->head)},
               {"branch_moved", state->head.has_value() && state->head != snap.base},
               {"behind", state->behind},
               {"ahead", state->ahead},
               {"changes", changes}});
    return kExitOk;
  }
  if (a.short_form) {
    std::string where = branch.empty() ? "no branch" : branch;
    if (state->behind) where += fmt::format(", behind {}", state->behind);
    if (state->ahead) where += fmt::format(", ahead {}", state->ahead);
    fmt::print("## {} ({})\n", target->name, where);
    for (const ChangeRow& r : *rows) fmt::print("{} {}\n", r.letter, r.path);
    return kExitOk;
  }
  fmt::print("workspace {}{}\n", target->name, mountpoint.empty() ? " (not mounted)" : ", mounted at " + mountpoint);
  fmt::print("base {}\n", snap.base ? snap.base->ToHex() : std::string("none (started empty)"));
  fmt::print("{}\n", BranchLine(branch, *state, snap.base));
  if (rows->empty()) {
    fmt::print("nothing to commit\n");
    return kExitOk;
  }
  size_t counts[4] = {0, 0, 0, 0};  // A D M T
  for (const ChangeRow& r : *rows) counts[std::string_view("ADMT").find(r.letter)]++;
  std::vector<std::string> parts;
  const char* names[4] = {"added", "deleted", "modified", "type changed"};
  for (int i = 0; i < 4; i++)
    if (counts[i]) parts.push_back(fmt::format("{} {}", counts[i], names[i]));
  fmt::print("{} changed {} against the base ({}):\n", rows->size(), rows->size() == 1 ? "path" : "paths",
             fmt::join(parts, ", "));
  for (const ChangeRow& r : *rows) fmt::print("  {}  {}\n", r.letter, r.path);
  return kExitOk;
}

}  // namespace

void RegisterStatusCommands(CLI::App& app, Globals& g, int* exit_code) {
  static StatusArgs a;  // option storage must outlive parsing
  auto* status = app.add_subcommand(
      "status", "what a workspace would commit (A added, D deleted, M modified, T type changed) and whether its "
                "branch moved on since its base");
  status->add_option("PATH", a.target,
                     "a mountpoint, a path inside one, or a workspace's name (default: the mount the current "
                     "directory is in)");
  status->add_flag("--short", a.short_form, "one line for the workspace and its branch, then a letter and a path per line");
  status->add_flag("--json", g.json, "machine-readable output");
  status->callback(OnWorkspaceArgument(&a.target, exit_code, [&g] { return RunStatus(g, a); }));
}

}  // namespace strata::cli
