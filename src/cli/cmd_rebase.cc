// strata rebase: a workspace's changes replayed on another commit (by
// default the head of its branch), after its commit was refused with "head
// moved".
//
// A mounted workspace is rebased by its daemon (the only process that may
// open it) after a syncfs of the mount, so that the kernel's dirty pages are
// part of what is replayed; the daemon then drops the names and attributes
// the kernel cached of the old namespace. A workspace that is not mounted is
// opened and rebased right here. Conflicting paths are listed, exit status 4,
// and the workspace is left exactly as it was.
//
// A conflict is settled by running the rebase again with a choice for each
// listed path: --ours PATH keeps the workspace's version, --theirs PATH takes
// the version of the commit rebased onto, --both PATH keeps the workspace's
// at PATH and writes the other beside it as PATH.theirs to be merged by hand.
// Every change of either side that is not in conflict is kept in every case;
// while any conflict is left without a choice, nothing changes.
#include <fmt/format.h>

#include <map>
#include <vector>

#include "cli/workspace_target.h"
#include "control/protocol.h"
#include "store/revision.h"

namespace strata::cli {
namespace {

struct RebaseArgs {
  std::string target, rev;
  std::vector<std::string> ours, theirs, both;  // conflicting paths, one per option
};

// A path as the conflict lines print it (from the workspace's top, "." for
// the top itself), or a usage error.
Result<std::string> ConflictPath(const std::string& given) {
  std::string p = given;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  if (p == ".") return std::string();
  if (p.empty() || p[0] == '/')
    return Status::InvalidArgument("'" + given + "': name a conflicting path as the conflict lines print it, from the "
                                   "workspace's top (e.g. a/f1)");
  for (size_t start = 0; start <= p.size();) {
    const size_t slash = std::min(p.find('/', start), p.size());
    const std::string name = p.substr(start, slash - start);
    if (name.empty() || name == "." || name == "..")
      return Status::InvalidArgument("'" + given + "' is not a path from the workspace's top");
    start = slash + 1;
  }
  return p;
}

// The choices the options name; a path named twice is a usage error.
Result<ConflictChoices> ChoicesOf(const RebaseArgs& a) {
  ConflictChoices choices;
  const std::pair<const std::vector<std::string>*, ConflictChoice> given[] = {
      {&a.ours, ConflictChoice::kOurs}, {&a.theirs, ConflictChoice::kTheirs}, {&a.both, ConflictChoice::kBoth}};
  for (const auto& [paths, choice] : given) {
    for (const std::string& raw : *paths) {
      STRATA_ASSIGN_OR_RETURN(std::string path, ConflictPath(raw));
      if (!choices.emplace(path, choice).second)
        return Status::InvalidArgument("'" + raw + "' is named by more than one of --ours, --theirs and --both");
    }
  }
  return choices;
}

// What each choice did, for people.
void PrintSettled(const ConflictChoices& choices) {
  for (const auto& [path, choice] : choices) {
    const std::string shown = path.empty() ? "." : path;
    switch (choice) {
      case ConflictChoice::kOurs: fmt::print("settled: {}  (kept the workspace's version)\n", shown); break;
      case ConflictChoice::kTheirs: fmt::print("settled: {}  (took the other side's version)\n", shown); break;
      case ConflictChoice::kBoth:
        fmt::print("settled: {}  (the workspace's version stays; the other side's, if it has one, is {}{})\n", shown,
                   shown, kTheirsSuffix);
        break;
    }
  }
}

// REV, or the head of the branch the workspace tracks.
Result<Hash> RebaseTarget(Store& store, const RebaseArgs& a, const WorkspaceTarget& target) {
  if (!a.rev.empty()) return ResolveContentRevision(store, a.rev);
  STRATA_ASSIGN_OR_RETURN(auto list, Workspace::List(store));
  for (const WorkspaceInfo& info : list) {
    if (info.name != target.name) continue;
    if (info.branch.empty())
      return Status::InvalidArgument("workspace '" + target.name +
                                     "' tracks no branch; name the commit to rebase onto");
    auto head = store.GetRef(info.branch);
    if (!head.ok()) return head.status();
    if (!*head) return Status::NotFound("branch '" + info.branch + "' does not exist");
    return **head;
  }
  return Status::NotFound("no workspace '" + target.name + "'");
}

// The daemon stopped before or during the rebase. A rebase is installed in
// one step, so the workspace holds the state from before or the rebased one:
// its base tells which.
Status DaemonStoppedInRebase(Store& store, const WorkspaceTarget& target, const Hash& onto, const Status& why) {
  if (!DaemonStoppedDuringRequest(why))
    return Status::Unavailable(why.message() + "; nothing was rebased; " + RemountHint(target));
  auto info = StateAfterDaemonStopped(store, target);
  if (!info.ok())
    return Status::Unavailable("the daemon stopped during the rebase; the state of workspace '" + target.name +
                               "' could not be read (" + info.status().message() + "); " + RemountHint(target));
  const bool landed = info->base == onto;
  return Status::Unavailable("the daemon stopped during the rebase; workspace '" + target.name + "' holds " +
                             (landed ? "the rebased state (based on " + ShortId(onto) + ", its changes on top)"
                                     : std::string("its state from before the rebase (nothing was changed)")) +
                             "; " + RemountHint(target));
}

Result<control::RebaseReply> RebaseWorkspace(Store& store, const RebaseArgs& a, const ConflictChoices& choices) {
  STRATA_ASSIGN_OR_RETURN(WorkspaceTarget target, ResolveWorkspace(store, a.target));
  if (IsReadOnlyMount(target.name))
    return Status::InvalidArgument("'" + a.target + "' serves a read-only mount: it has no changes to rebase");
  STRATA_ASSIGN_OR_RETURN(Hash onto, RebaseTarget(store, a, target));
  if (target.mounted) {
    auto reply = AskDaemon(store, target, control::RebaseRequest{onto, choices}, /*sync=*/true);
    if (!reply.ok() && reply.status().code() == Status::Code::kUnavailable)
      return DaemonStoppedInRebase(store, target, onto, reply.status());
    return reply;
  }
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  STRATA_ASSIGN_OR_RETURN(RebaseOutcome out, ws->RebaseOnto(onto, choices));
  return control::RebaseReplyOf(onto, out);
}

int RunRebase(Globals& g, const RebaseArgs& a) {
  auto choices = ChoicesOf(a);
  if (!choices.ok()) return UsageError(choices.status().message());
  auto store = OpenStoreFor(g, a.target);
  if (!store.ok()) return Fail(store.status());
  auto reply = RebaseWorkspace(**store, a, *choices);
  if (!reply.ok()) return Fail(reply.status());
  const control::RebaseReply& r = *reply;
  if (r.up_to_date && !choices->empty())  // a choice that settles nothing is reported, as by the merge
    return Fail(Status::InvalidArgument(a.target + " is already up to date: nothing is in conflict"));
  const bool conflicts = !r.conflicts.empty();
  if (g.json) {
    PrintJson(control::ToJson(r));
    return conflicts ? kExitConflict : kExitOk;
  }
  const std::string onto = r.onto.ToHex().substr(0, 12);
  if (r.up_to_date) {
    fmt::print("{} is already up to date with {}\n", a.target, onto);
    return kExitOk;
  }
  if (conflicts) {
    fmt::print(stderr,
               "strata: cannot rebase {} onto {}: {} path(s) changed on both sides{}; nothing was changed\n"
               "strata: settle each with --ours PATH, --theirs PATH or --both PATH and rebase again\n",
               a.target, onto, r.conflicts.size(), choices->empty() ? "" : " and not settled");
    for (const MergeConflict& c : r.conflicts) fmt::print("conflict: {}  ({})\n", c.path.empty() ? "." : c.path, c.reason);
    return kExitConflict;
  }
  PrintSettled(*choices);
  fmt::print("{} rebased onto {}; {}\n", a.target, onto,
             r.differs ? "the next commit holds its changes"
                                      : "its content is that commit's (nothing to commit)");
  return kExitOk;
}

}  // namespace

void RegisterRebaseCommands(CLI::App& app, Globals& g, int* exit_code) {
  static RebaseArgs a;  // option storage must outlive parsing
  auto* rebase = app.add_subcommand(
      "rebase", "replay a workspace's changes on REV (default: its branch's head); conflicts change nothing "
      "until each is settled with --ours, --theirs or --both");
  rebase->add_option("TARGET", a.target, "a mountpoint of a workspace, a path inside one, or a workspace's name")
      ->required();
  rebase->add_option("REV", a.rev, "the commit to rebase onto (default: the head of the workspace's branch)");
  rebase->add_option("--ours", a.ours,
                     "settle the conflict at PATH with the workspace's version (repeatable; PATH as the conflict "
                     "lines print it)")
      ->allow_extra_args(false)
      ->type_name("PATH");
  rebase->add_option("--theirs", a.theirs,
                     "settle the conflict at PATH with the version of the commit rebased onto (repeatable)")
      ->allow_extra_args(false)
      ->type_name("PATH");
  rebase->add_option("--both", a.both,
                     "settle the conflict at PATH by keeping the workspace's version there and writing the other "
                     "beside it as PATH.theirs, to merge by hand (repeatable)")
      ->allow_extra_args(false)
      ->type_name("PATH");
  rebase->add_flag("--json", g.json, "print the result as JSON");
  rebase->callback(OnWorkspaceArgument(&a.target, exit_code, [&g] { return RunRebase(g, a); }));
}

}  // namespace strata::cli
